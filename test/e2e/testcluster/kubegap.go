package testcluster

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The kubegap binary under test, built once per test process into a
// directory Main removes when the run ends (each build is ~100 MB; left
// behind, every e2e run would add one to the temp directory).
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// Kubegap returns the path of the kubegap binary built from this module's
// cmd/kubegap, building it on first use. A failed build fails the test with
// the compiler's output.
func Kubegap(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "kubegap-e2e-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "kubegap")
		built.out, built.err = exec.Command("go", "build", "-o", built.path,
			"github.com/kubegap/kubegap/cmd/kubegap").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("building kubegap: %v\n%s", built.err, built.out)
	}
	return built.path
}

// removeKubegap deletes the built binary, if any; Main calls it after the
// package's tests.
func removeKubegap() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}

// Run runs the kubegap binary with args and returns its exit code and
// output; a failure to start it fails the test.
func Run(t testing.TB, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(Kubegap(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}
