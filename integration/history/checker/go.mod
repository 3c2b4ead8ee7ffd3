// SPDX-License-Identifier: Apache-2.0
module registryconsul/history/checker

go 1.22

require github.com/anishathalye/porcupine v1.3.1
