package floor

import (
	"testing"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestEveryKnownInputIsListable: the floor lists every input as kubegap
// reads it, so each needs a way here: a typed list, the dynamic client (a
// custom resource), one GET per name, or one GET of its URL. The 100k-pod
// run once died on the API server's /metrics, which has no list kind.
func TestEveryKnownInputIsListable(t *testing.T) {
	for _, r := range snapshot.Known() {
		if r.Custom || r.Named || r.NonResourceURL != "" {
			continue
		}
		if newList, _, _ := snapshot.ListKind(r); newList == nil {
			t.Errorf("%s: no list kind, and the floor has no other way to read it", r)
		}
	}
}
