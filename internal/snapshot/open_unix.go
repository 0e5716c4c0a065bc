//go:build unix

package snapshot

import "syscall"

// openNonBlocking makes open return at once on a named pipe with no
// writer (it would block until one came); reads of a regular file ignore it.
const openNonBlocking = syscall.O_NONBLOCK
