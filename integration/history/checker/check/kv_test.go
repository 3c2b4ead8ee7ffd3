// SPDX-License-Identifier: Apache-2.0

package check

import "testing"

const bad = "not linearizable"

func TestSequentialWritesAndReadsPass(t *testing.T) {
	pass(t, get("a", "/k", "", 0, 1), put("a", "/k", "1", 2, 3), get("b", "/k", "1", 4, 5),
		update("b", "/k", "2", true, 6, 7), get("a", "/k", "2", 8, 9), del("a", "/k", 10, 11),
		get("b", "/k", "", 12, 13), update("b", "/k", "3", false, 14, 15))
}

func TestAReadConcurrentWithAWriteMaySeeEitherValue(t *testing.T) {
	pass(t, put("a", "/k", "1", 0, 10), put("a", "/k", "2", 20, 40), get("b", "/k", "1", 25, 30))
	pass(t, put("a", "/k", "1", 0, 10), put("a", "/k", "2", 20, 40), get("b", "/k", "2", 25, 30))
}

func TestStaleReadIsFlagged(t *testing.T) {
	flagged(t, bad, put("a", "/k", "1", 0, 10), put("a", "/k", "2", 20, 30),
		get("b", "/k", "1", 40, 50))
}

func TestLostWriteIsFlagged(t *testing.T) {
	flagged(t, bad, put("a", "/k", "1", 0, 10), get("b", "/k", "", 20, 30))
	flagged(t, bad, put("a", "/k", "1", 0, 10), put("b", "/k", "2", 20, 30),
		get("a", "/k", "1", 40, 50), get("a", "/k", "2", 60, 70))
}

func TestAReadMustNotGoBackInTime(t *testing.T) {
	// Both reads overlap the write, but the later read cannot see the older value.
	flagged(t, bad, put("a", "/k", "1", 0, 10), put("a", "/k", "2", 20, 100),
		get("b", "/k", "2", 30, 40), get("c", "/k", "1", 50, 60))
}

func TestAFailedWriteMustNotBeSeen(t *testing.T) {
	flagged(t, bad, failed(put("a", "/k", "1", 0, 10)), get("b", "/k", "1", 20, 30))
	pass(t, failed(put("a", "/k", "1", 0, 10)), get("b", "/k", "", 20, 30))
}

func TestAValueNeverWrittenMustNotBeRead(t *testing.T) {
	flagged(t, bad, put("a", "/k", "1", 0, 10), get("b", "/k", "ghost", 20, 30))
}

func TestAnUnknownWriteIsAcceptedBothWays(t *testing.T) {
	pass(t, unknown(put("a", "/k", "1", 0, 0)), get("b", "/k", "1", 20, 30))
	pass(t, unknown(put("a", "/k", "1", 0, 0)), get("b", "/k", "", 20, 30))
	// Once seen, it took effect: it cannot be undone later.
	flagged(t, bad, unknown(put("a", "/k", "1", 0, 0)), get("b", "/k", "1", 20, 30),
		get("b", "/k", "", 40, 50))
	// But it may take effect late, after a later write: the last word is its.
	pass(t, unknown(put("a", "/k", "1", 0, 0)), put("b", "/k", "2", 10, 20),
		get("b", "/k", "2", 30, 40), get("b", "/k", "1", 50, 60))
	// Never before its call.
	flagged(t, bad, get("b", "/k", "1", 0, 10), unknown(put("a", "/k", "1", 20, 0)))
}

func TestUnknownPutIfAbsentAndUpdateAreAcceptedBothWays(t *testing.T) {
	pass(t, unknown(putIfAbsent("a", "/k", "1", false, 0, 0)), get("b", "/k", "1", 20, 30))
	pass(t, unknown(putIfAbsent("a", "/k", "1", false, 0, 0)), get("b", "/k", "", 20, 30))
	pass(t, put("a", "/k", "1", 0, 5), unknown(update("a", "/k", "2", false, 10, 0)),
		get("b", "/k", "2", 20, 30))
	pass(t, put("a", "/k", "1", 0, 5), unknown(update("a", "/k", "2", false, 10, 0)),
		get("b", "/k", "1", 20, 30))
}

func TestAtMostOneExclusiveCreateWins(t *testing.T) {
	pass(t, putIfAbsent("a", "/k", "a", true, 0, 10), putIfAbsent("b", "/k", "b", false, 5, 15),
		get("c", "/k", "a", 20, 30))
	flagged(t, bad, put("a", "/k", "a", 0, 10), putIfAbsent("b", "/k", "b", true, 20, 30))
	// A limit of the model, not a wish: the first winner's session may end at any moment (the
	// dev server's faults expire sessions) and the history records no session's end, so a
	// second winner is legal once the first key may have vanished.
	pass(t, putIfAbsent("a", "/k", "a", true, 0, 10), putIfAbsent("b", "/k", "b", true, 5, 15))
	flagged(t, bad, putIfAbsent("a", "/k", "a", false, 0, 10)) // refused on an absent key
}

func TestAnUpdateOfAnAbsentKeyIsNotFound(t *testing.T) {
	flagged(t, bad, update("a", "/k", "1", true, 0, 10))
	flagged(t, bad, put("a", "/k", "1", 0, 10), update("a", "/k", "2", false, 20, 30))
}

func TestADeleteRemovesTheWholeSubtree(t *testing.T) {
	pass(t, put("a", "/a/b", "1", 0, 10), put("a", "/ab", "2", 0, 10), del("a", "/a", 20, 30),
		get("b", "/a/b", "", 40, 50), get("b", "/ab", "2", 40, 50))
	flagged(t, bad, put("a", "/a/b", "1", 0, 10), del("a", "/a", 20, 30),
		get("b", "/a/b", "1", 40, 50))
}

func TestAnEphemeralKeyMayVanishAndComeBackButAPersistentOneMayNot(t *testing.T) {
	// The session ended (the key vanished), then its restorer re-created it.
	pass(t, ephemeral("a", "/k", "1", 0, 10), get("b", "/k", "", 20, 30),
		get("b", "/k", "1", 40, 50))
	pass(t, ephemeral("a", "/k", "1", 0, 10), putIfAbsent("b", "/k", "2", true, 20, 30),
		get("b", "/k", "2", 40, 50))
	flagged(t, bad, put("a", "/k", "1", 0, 10), get("b", "/k", "", 20, 30),
		get("b", "/k", "1", 40, 50))
	// Vanishing is no licence to show a value nobody wrote ephemerally.
	flagged(t, bad, ephemeral("a", "/k", "1", 0, 10), put("b", "/k", "2", 20, 30),
		get("b", "/k", "3", 40, 50))
	// The deleter's own key is not re-created after its delete.
	flagged(t, bad, ephemeral("a", "/k", "1", 0, 10), del("a", "/k", 20, 30),
		get("b", "/k", "1", 40, 50))
}

func TestFencedWritesAreWritesOfTheirKey(t *testing.T) {
	ops := []*Op{acquire("a", "L", "h1", 0, 10), fenced("a", "L", "h1", "/k", "1", 20, 30),
		release("a", "L", "h1", 40, 50)}
	pass(t, append(ops, get("b", "/k", "1", 60, 70))...)
	flagged(t, bad, append(ops, get("b", "/k", "", 60, 70))...)
}
