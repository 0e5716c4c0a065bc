package images

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
)

// maxReleaseBytes caps a `release` file read in full. A JDK's is well
// under 2 KiB; a larger file of that name is something else.
const maxReleaseBytes = 64 << 10

// isReleaseCandidate reports whether a file may be a JDK or JRE `release`
// file: named exactly "release" (not os-release or lsb-release) and small.
func isReleaseCandidate(p string, size int64) bool {
	return path.Base(p) == "release" && size > 0 && size <= maxReleaseBytes
}

// readJavaRelease parses a JDK or JRE `release` file, the KEY="value"
// lines the build writes into the runtime's home directory. It returns
// ok false when the file has no JAVA_VERSION: then it is not a JDK's.
// Environment variables are never consulted: they describe how an image
// was built, not what it holds, and their values are not ours to print.
func readJavaRelease(p string, r io.Reader) (rt check.JavaRuntime, ok bool, err error) {
	b, err := io.ReadAll(io.LimitReader(r, maxReleaseBytes))
	if err != nil {
		return rt, false, fmt.Errorf("reading %s: %w", p, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, found := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !found {
			continue
		}
		v = printable(strings.Trim(strings.TrimSpace(v), `"`))
		switch strings.TrimSpace(k) {
		case "JAVA_VERSION":
			rt.Version = v
		case "JAVA_VERSION_DATE":
			rt.Date = v
		case "JVM_VARIANT":
			rt.VM = v
		case "IMPLEMENTOR":
			rt.Implementor = v
		}
	}
	if rt.Version == "" || len(rt.Version) > 64 {
		return check.JavaRuntime{}, false, nil
	}
	rt.Home = path.Dir(p)
	return rt, true, nil
}
