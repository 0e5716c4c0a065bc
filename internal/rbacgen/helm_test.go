package rbacgen_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/rbacgen"
)

// chartDir is the Helm chart (deploy/helm/kubegap).
const chartDir = "../../deploy/helm/kubegap/templates/"

// TestHelmChartRBAC keeps the chart's ClusterRole rules what kubegap rbac
// prints for every check (the reader's, as deploy/rbac.yaml) and what
// publish needs (the publisher's); UPDATE_DOCS=1 rewrites them.
func TestHelmChartRBAC(t *testing.T) {
	reader := rbacgen.YAML(audit.Resources(checks.All()), rbacgen.Options{})
	// The publisher's ClusterRole for both formats, as kubegap rbac
	// --publisher prints it: its first rules block.
	publisher := rbacgen.PublisherYAML(rbacgen.PublisherOptions{})
	publisher = publisher[strings.Index(publisher, "rules:\n"):]
	if end := strings.Index(publisher, "\n---\n"); end >= 0 {
		publisher = publisher[:end+1]
	}
	for file, rules := range map[string]string{
		"rbac-reader.yaml":    reader[strings.Index(reader, "rules:\n"):],
		"rbac-publisher.yaml": publisher,
	} {
		b, err := os.ReadFile(chartDir + file)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		start := strings.Index(s, "\nrules:\n")
		end := strings.Index(s[start+1:], "\n---\n")
		if start < 0 || end < 0 {
			t.Fatalf("%s: no rules block before the next document", file)
		}
		want := s[:start+1] + rules + s[start+1+end+1:]
		if os.Getenv("UPDATE_DOCS") != "" {
			if err := os.WriteFile(chartDir+file, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if s != want {
			t.Errorf("deploy/helm/kubegap/templates/%s: its rules are not kubegap rbac's; UPDATE_DOCS=1 go test ./internal/rbacgen -run TestHelmChartRBAC rewrites them", file)
		}
	}
}
