package snapshot

import (
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod list Reserve sized to its bound (maxReserve) grows once, when it
// fills up, to the count the input claimed: a 1M-pod snapshot's list is
// copied once, not by append's steps, and ends exactly as long as claimed.
func TestReservedListGrowsToItsClaim(t *testing.T) {
	bound := maxReserve / int(unsafe.Sizeof(Pod{}))
	claim := bound + 1000
	s := New(Source{})
	s.Reserve(Pods, claim)
	if got := cap(s.Pods); got != bound {
		t.Fatalf("Reserve made room for %d pods, want the bound %d", got, bound)
	}
	k, _ := kindFor(Pods)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	for range bound + 1 {
		k.addDecoded(s, p)
	}
	if got := cap(s.Pods); got < claim || got > claim+claim/100 {
		t.Errorf("after %d pods the list has room for %d, want %d (the claim)", bound+1, got, claim)
	}
}

// A claim is trusted to claimTrust times the objects a full list holds,
// so that a hostile count buys at most that much memory; a list not full,
// or holding its claim already, is left alone.
func TestGrowClaimedBounds(t *testing.T) {
	s := New(Source{})
	s.claims = map[Resource]int{Pods: 1 << 40}
	list := make([]int, 10)
	growClaimed(s, Pods, &list)
	if got := cap(list); got < claimTrust*10 || got > claimTrust*10+64 {
		t.Errorf("a hostile claim grew a full 10-item list to %d, want about %d", got, claimTrust*10)
	}
	roomy := make([]int, 10, 11)
	growClaimed(s, Pods, &roomy)
	if cap(roomy) != 11 {
		t.Errorf("a list with room grew to %d", cap(roomy))
	}
	s.claims[Pods] = 10
	growClaimed(s, Pods, &list)
	full := list[:cap(list)]
	growClaimed(s, Pods, &full)
	if cap(full) != cap(list) {
		t.Errorf("a list at its claim grew from %d to %d", cap(list), cap(full))
	}
}
