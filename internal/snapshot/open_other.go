//go:build !unix

package snapshot

// openNonBlocking: elsewhere, the stat before open is the guard.
const openNonBlocking = 0
