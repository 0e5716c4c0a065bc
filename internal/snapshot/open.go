package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Limits on offline input. They bound what the loader holds at once, not
// how large a file may be: a snapshot and a kubectl List, JSON or YAML, are
// read item by item, so their size grows with the cluster's while memory
// stays at about what the objects kept need (docs/benchmarks.md: a
// 100k-pod YAML dump is 508 MB, its snapshot 16.2 MB gzipped). A cap per
// file would refuse large clusters without bounding memory any better; a
// cap per line and per document refuses what no Kubernetes tool writes.
const (
	// maxLine bounds one line of YAML. kube-apiserver refuses request
	// bodies over 3 MiB, so no object it stores, and no line kubectl
	// prints of one, comes near it; /dev/zero and sparse files (NUL bytes,
	// no newline) end here.
	maxLine = 16 << 20
	// maxDocument bounds what is held at once of one document: a YAML
	// document or JSON value read whole, or one item of a List or
	// snapshot, JSON or YAML, read item by item (see jsonlist.go and
	// yamlscan.go). A List is thus bounded per item, not as a whole:
	// 4-space-indented JSON is about 2.5 times the YAML (126 MB for
	// bench/cmd/synth's 10k pods), and a kubectl -o json List of a large
	// cluster is far past this.
	maxDocument = 256 << 20
	// maxDecompressed and maxGzipRatio bound what one gzip file inflates
	// to: up to maxDecompressed (four times the 100k-pod YAML dump) in any
	// case, and past it only while the output stays within maxGzipRatio
	// times the compressed bytes read so far. A gzip bomb (deflate reaches
	// about 1,000:1) ends there instead of running the loader for as long
	// as its bytes last, while a large cluster's snapshot, which gzip
	// shrinks about 12 to 25 times (2M pods: 4.05 GB in 321 MB,
	// docs/benchmarks.md), is read whole: a gzip file then costs at most
	// what a plain file maxGzipRatio times its size would, and plain files
	// have no cap (see above).
	maxDecompressed = 2 << 30
	maxGzipRatio    = 64
)

// documentLimit and gzipLimit are the limits the loader applies; tests
// lower them to reach the limits with small files.
var (
	documentLimit int64 = maxDocument
	gzipLimit     int64 = maxDecompressed
)

// limitError is input past one of the limits above; its text names the
// limit, so that the user knows it is kubegap's and not the file's.
type limitError struct{ what string }

func (e *limitError) Error() string { return e.what }

var (
	errLongLine     = &limitError{fmt.Sprintf("a line longer than %d MiB, the most one YAML line may hold (not a Kubernetes object: binary data, or a file of NUL bytes?)", maxLine>>20)}
	errLargeDoc     = &limitError{fmt.Sprintf("a document or List item larger than %d MiB, the most one may hold (a List or snapshot, JSON or YAML, is read item by item: the limit is per item, not per List)", maxDocument>>20)}
	errLargeGzip    = &limitError{fmt.Sprintf("decompresses to more than %d GiB and to more than %d times its compressed size, the most one gzip file may hold (a gzip bomb?)", maxDecompressed>>30, maxGzipRatio)}
	errChangedInput = errors.New("changed while it was being opened")
)

// openInput opens a file of offline input for reading. Only regular files
// are read: a named pipe would block in open (and then in read, past
// Ctrl-C), a device never ends (/dev/zero, /dev/urandom) or is a terminal,
// and /dev/stdin is the standard input the CLI reads only as "-" (and
// the MCP server's transport). The file is checked with stat before it
// is opened, opened without blocking (for a pipe swapped in between),
// and checked again once open.
func openInput(name string) (*os.File, error) {
	st, err := statInput(name)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return nil, &InputError{File: name, Err: unwrapPathError(err)}
	}
	now, err := f.Stat()
	if err == nil && (!os.SameFile(st, now) || notRegular(now) != nil) {
		err = errChangedInput
	}
	if err != nil {
		f.Close()
		return nil, &InputError{File: name, Err: unwrapPathError(err)}
	}
	return f, nil
}

// statInput stats a file of offline input, following symbolic links, and
// refuses anything but a regular file.
func statInput(name string) (fs.FileInfo, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, &InputError{File: name, Err: unwrapPathError(err)}
	}
	if err := notRegular(st); err != nil {
		return nil, &InputError{File: name, Err: err}
	}
	return st, nil
}

// notRegular says what st is when it is not a regular file, nil when it is.
func notRegular(st fs.FileInfo) error {
	stdin := isStdin(st)
	m := st.Mode()
	if m.IsRegular() && !stdin {
		return nil
	}
	var what string
	switch {
	case m.IsRegular():
		what = "a regular file"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m.IsDir():
		what = "a directory"
	default:
		what = "not a regular file (" + m.Type().String() + ")"
	}
	if stdin {
		return fmt.Errorf("is kubegap's own standard input (%s): it is not read as a file; the CLI reads standard input only as --from -", what)
	}
	return fmt.Errorf("is %s: only regular files and directories are read", what)
}

// isStdin is true when st is the file this process has as standard input.
func isStdin(st fs.FileInfo) bool {
	if os.Stdin == nil {
		return false
	}
	in, err := os.Stdin.Stat()
	return err == nil && os.SameFile(st, in)
}

// gzipBound ends with errLargeGzip once the bytes read from r, a gzip
// stream, pass both limit and maxGzipRatio times the compressed bytes that
// in has counted so far.
type gzipBound struct {
	r     io.Reader
	in    *countingReader
	out   int64
	limit int64
}

func (g *gzipBound) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.out += int64(n)
	if g.out > g.limit && g.out > maxGzipRatio*g.in.n {
		return n, errLargeGzip
	}
	return n, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// valueBudget bounds the bytes a jsontext.Decoder buffers for one value.
// No read goes past limit bytes after mark (the InputOffset where the
// value being read began), and the decoder reads only when that value
// needs more bytes: a read asked for at the limit means the value is
// larger, and is refused instead of letting the decoder's buffer grow on.
type valueBudget struct {
	r     io.Reader
	read  int64
	mark  int64
	limit int64
}

func (b *valueBudget) Read(p []byte) (int, error) {
	room := b.limit - (b.read - b.mark)
	if room <= 0 {
		return 0, errLargeDoc
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

// asLimit returns the limitError in err's chain, if any, for messages that
// should name the limit rather than what the parser made of it.
func asLimit(err error) (*limitError, bool) {
	var le *limitError
	ok := errors.As(err, &le)
	return le, ok
}
