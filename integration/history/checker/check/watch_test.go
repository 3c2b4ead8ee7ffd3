// SPDX-License-Identifier: Apache-2.0

package check

import "testing"

// Three writes of /k, done by t=50; watcher w's events come later.
func writes() []*Op {
	return []*Op{put("a", "/k", "1", 0, 10), put("a", "/k", "2", 20, 30), put("a", "/k", "3", 40, 50)}
}

func with(ops []*Op, more ...*Op) []*Op { return append(append([]*Op{}, ops...), more...) }

func TestAWatcherMayLagAndSkipCoalescedWrites(t *testing.T) {
	// Default-mode reads: an event may report a state older than the latest.
	pass(t, with(writes(), event("w", "ADDED", "/k", "1", 60), event("w", "UPDATED", "/k", "3", 70),
		watchEnd("w", "/", 80))...)
	pass(t, with(writes(), event("w", "ADDED", "/k", "2", 60))...)
}

func TestAWatcherSeesDeletesAndNewKeys(t *testing.T) {
	ops := []*Op{put("a", "/k", "1", 0, 10), del("a", "/k", 20, 30), put("a", "/k", "2", 40, 50)}
	pass(t, with(ops, event("w", "ADDED", "/k", "1", 5), event("w", "DELETED", "/k", "1", 35),
		event("w", "ADDED", "/k", "2", 55), watchEnd("w", "/", 60))...)
	// The delete coalesced away: the key changed while present.
	pass(t, with(ops, event("w", "ADDED", "/k", "1", 15), event("w", "UPDATED", "/k", "2", 55),
		watchEnd("w", "/", 60))...)
}

func TestAReorderedWatchEventIsFlagged(t *testing.T) {
	flagged(t, bad, with(writes(), event("w", "ADDED", "/k", "1", 60),
		event("w", "UPDATED", "/k", "3", 70), event("w", "UPDATED", "/k", "2", 80))...)
}

func TestAnEventForAWriteThatNeverHappenedIsFlagged(t *testing.T) {
	flagged(t, bad, with(writes(), event("w", "ADDED", "/k", "ghost", 60))...)
	flagged(t, bad, failed(put("a", "/k", "1", 0, 10)), event("w", "ADDED", "/k", "1", 20))
	flagged(t, bad, event("w", "ADDED", "/other", "1", 20))
	// Nor before the write was called: a stale read never sees the future.
	flagged(t, bad, event("w", "ADDED", "/k", "1", 5), put("a", "/k", "1", 10, 20))
}

func TestOnlyANewAddedFollowsADeleted(t *testing.T) {
	ops := []*Op{put("a", "/k", "1", 0, 10), del("a", "/k", 20, 30), put("a", "/k", "2", 40, 50),
		event("w", "ADDED", "/k", "1", 15), event("w", "DELETED", "/k", "1", 35)}
	flagged(t, bad, with(ops, event("w", "UPDATED", "/k", "2", 55))...)
	flagged(t, bad, with(ops, event("w", "DELETED", "/k", "1", 55))...)
	// ADDED of a present key, and a DELETED that names another value than the last told.
	flagged(t, bad, with(writes(), event("w", "ADDED", "/k", "1", 60),
		event("w", "ADDED", "/k", "2", 70))...)
	flagged(t, bad, put("a", "/k", "1", 0, 10), put("a", "/k", "2", 20, 30), del("a", "/k", 40, 50),
		event("w", "ADDED", "/k", "1", 15), event("w", "DELETED", "/k", "2", 55))
}

func TestTheFinalViewMustEqualTheLastWrite(t *testing.T) {
	flagged(t, bad, with(writes(), event("w", "ADDED", "/k", "2", 60), watchEnd("w", "/", 70))...)
	// A watcher that never reported a key that exists missed it.
	flagged(t, bad, with(writes(), watchEnd("w", "/", 70))...)
	// Two watchers are checked apart.
	flagged(t, bad, with(writes(), event("v", "ADDED", "/k", "3", 60), watchEnd("v", "/", 70),
		event("w", "ADDED", "/k", "1", 60), watchEnd("w", "/", 70))...)
}

func TestTheFinalViewMayOrMayNotHoldAnUnknownWrite(t *testing.T) {
	ops := []*Op{put("a", "/k", "1", 0, 10), unknown(put("a", "/k", "2", 20, 0)),
		event("w", "ADDED", "/k", "1", 30)}
	pass(t, with(ops, watchEnd("w", "/", 70))...)
	pass(t, with(ops, event("w", "UPDATED", "/k", "2", 40), watchEnd("w", "/", 70))...)
	flagged(t, bad, with(ops, event("w", "UPDATED", "/k", "2", 40), get("b", "/k", "1", 50, 60))...)
}

func TestAWatcherMaySeeAnEphemeralKeyVanishAndComeBack(t *testing.T) {
	pass(t, ephemeral("a", "/k", "1", 0, 10), event("w", "ADDED", "/k", "1", 20),
		event("w", "DELETED", "/k", "1", 30), event("w", "ADDED", "/k", "1", 40),
		watchEnd("w", "/", 50))
	flagged(t, bad, put("a", "/k", "1", 0, 10), event("w", "ADDED", "/k", "1", 20),
		event("w", "DELETED", "/k", "1", 30))
}
