package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// CheckScope refuses a namespace scope (-n) that names a namespace the
// snapshot proves does not exist: the Namespace read is complete and does
// not hold it. The error lists the namespaces that exist, so that a typo
// is an exit 2 with the fix in sight rather than a plausible, empty
// report. Where Namespaces were not read completely, the scope is taken
// as given; ScopeNote says so in the report.
func CheckScope(s *snapshot.Snapshot) error {
	asked := s.Source.Scope.Namespaces
	if len(asked) == 0 || !s.Status(snapshot.Namespaces).Complete {
		return nil
	}
	exist := make([]string, 0, len(s.Namespaces))
	for i := range s.Namespaces {
		exist = append(exist, s.Namespaces[i].Name)
	}
	slices.Sort(exist)
	for _, ns := range asked {
		if !slices.Contains(exist, ns) {
			return fmt.Errorf("namespace %q does not exist (the namespaces are: %s)", ns, strings.Join(exist, ", "))
		}
	}
	return nil
}

// ScopeNote is the one sentence a scoped report carries when the
// namespace could not be confirmed to exist (Namespaces not read
// completely); empty otherwise.
func ScopeNote(s *snapshot.Snapshot) string {
	asked := s.Source.Scope.Namespaces
	if len(asked) == 0 || s.Status(snapshot.Namespaces).Complete {
		return ""
	}
	return fmt.Sprintf("%s could not be confirmed to exist: Namespaces were not read completely, so an empty report may mean a misspelt name",
		snapshot.Scope{Namespaces: asked})
}
