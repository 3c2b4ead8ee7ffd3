// SPDX-License-Identifier: Apache-2.0
// tools/descriptors.h
//
// The command registryctl runs under a lock must inherit what registryctl's own caller gave it
// (say a descriptor 3 the shell opened for the command), and nothing registryctl opened itself:
// libcurl's wake-up socket pairs and any descriptor a library made without close-on-exec would
// otherwise stay open in the command, past registryctl's own end.
//
// Thread safety: RememberInheritedDescriptors() once, first thing in main(); the other from any
// thread after it.
#ifndef REGISTRY_TOOLS_DESCRIPTORS_H_
#define REGISTRY_TOOLS_DESCRIPTORS_H_

namespace registry::tools {

// Records the descriptors open now: those the process inherited.
void RememberInheritedDescriptors();

// Marks close-on-exec every descriptor above 2 opened since RememberInheritedDescriptors().
void CloseOwnDescriptorsOnExec();

}  // namespace registry::tools

#endif  // REGISTRY_TOOLS_DESCRIPTORS_H_
