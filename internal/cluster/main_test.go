package cluster

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// TestMain keeps client-go's klog lines about the bodies the tests cut
// short out of the test output, as kubegap's cli does for its own runs.
func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
