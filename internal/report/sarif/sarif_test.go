package sarif

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/report/reporttest"
)

// schema compiles the official SARIF 2.1.0 schema (OASIS errata01, copied
// from the oasis-tcs/sarif-spec repository) with format assertions on, so
// that a bad URI or date fails too.
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rules() []Rule {
	var out []Rule
	for _, c := range reporttest.Rules() {
		out = append(out, Rule{ID: c.ID, Title: c.Title, Description: c.Description, Severity: c.Severity, Cases: c.Cases})
	}
	return out
}

func render(t *testing.T, r *report.Report) (map[string]any, []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r, Options{Rules: rules(), CaseTitle: func(id string) string { return "Title of " + id }}); err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return doc.(map[string]any), b.Bytes()
}

func TestValidAgainstTheOfficialSchema(t *testing.T) {
	s := schema(t)
	for name, r := range map[string]*report.Report{"demo": reporttest.Demo(t), "edges": reporttest.Edges()} {
		doc, _ := render(t, r)
		if err := s.Validate(doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The schema does reject a broken log, so the check above can fail.
	bad := map[string]any{"version": "2.1.0", "runs": []any{map[string]any{"tool": map[string]any{"driver": map[string]any{}}}}}
	if err := s.Validate(bad); err == nil {
		t.Error("a driver without a name passed the schema")
	}
}

type sarifLog struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Name, Version string
				Rules         []struct {
					ID      string
					HelpURI string
					Help    struct{ Text, Markdown string }
				}
			}
		}
		Invocations []struct {
			Notifications []struct{ Message struct{ Text string } } `json:"toolExecutionNotifications"`
		}
		Results []struct {
			RuleID              string
			RuleIndex           int
			Level               string
			PartialFingerprints map[string]string
			Locations           []struct {
				PhysicalLocation *struct {
					ArtifactLocation struct{ URI string }
					Region           struct{ StartLine int }
				}
				LogicalLocations []struct{ FullyQualifiedName string }
			}
		}
	}
}

func TestContent(t *testing.T) {
	r := reporttest.Demo(t)
	_, raw := render(t, r)
	var l sarifLog
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatal(err)
	}
	run := l.Runs[0]
	if run.Tool.Driver.Name != "kubegap" || run.Tool.Driver.Version != "v0.0.0-test" {
		t.Errorf("driver %+v", run.Tool.Driver)
	}
	if len(run.Tool.Driver.Rules) != len(r.Checks) {
		t.Errorf("%d rules for %d checks", len(run.Tool.Driver.Rules), len(r.Checks))
	}
	for _, rule := range run.Tool.Driver.Rules {
		if !strings.HasPrefix(rule.HelpURI, report.RepositoryURL+"/blob/main/docs/cases/") || !strings.HasSuffix(rule.HelpURI, ".md") || !strings.Contains(rule.Help.Markdown, "]("+report.RepositoryURL+"/blob/main/docs/cases/") {
			t.Errorf("rule %s: helpUri %q, help %q", rule.ID, rule.HelpURI, rule.Help.Markdown)
		}
	}
	if len(run.Results) != len(r.Findings)+len(r.Suppressed) {
		t.Fatalf("%d results for %d findings and %d suppressed", len(run.Results), len(r.Findings), len(r.Suppressed))
	}
	for i, res := range run.Results[:len(r.Findings)] {
		f := r.Findings[i]
		if res.RuleID != f.Check || run.Tool.Driver.Rules[res.RuleIndex].ID != f.Check {
			t.Errorf("result %d: rule %s index %d for check %s", i, res.RuleID, res.RuleIndex, f.Check)
		}
		if res.PartialFingerprints[FingerprintKey] != f.ID || f.ID == "" {
			t.Errorf("result %d: fingerprint %v, ID %s", i, res.PartialFingerprints, f.ID)
		}
		if len(res.Locations) != len(f.Objects) || res.Locations[0].LogicalLocations[0].FullyQualifiedName != f.Objects[0].String() {
			t.Errorf("result %d: logical locations %+v", i, res.Locations)
		}
		if want := level(f.Severity); res.Level != want {
			t.Errorf("result %d: level %s, want %s", i, res.Level, want)
		}
	}
}

func TestFileLocationsAndNotifications(t *testing.T) {
	_, raw := render(t, reporttest.Edges())
	var l sarifLog
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatal(err)
	}
	loc := l.Runs[0].Results[0].Locations
	if len(loc) != 1 || loc[0].PhysicalLocation == nil || loc[0].PhysicalLocation.ArtifactLocation.URI != "manifests/my%20app/agent.yaml" ||
		loc[0].PhysicalLocation.Region.StartLine != 12 {
		t.Errorf("locations %+v", loc)
	}
	// The suppressed finding is a result marked as accepted, with the reason.
	var doc map[string]any
	json.Unmarshal(mustRender(t), &doc)
	results := doc["runs"].([]any)[0].(map[string]any)["results"].([]any)
	last := results[len(results)-1].(map[string]any)
	sups, _ := last["suppressions"].([]any)
	if last["ruleId"] != "version-skew" || len(sups) != 1 ||
		sups[0].(map[string]any)["justification"] != "pool retired in Q1" || sups[0].(map[string]any)["kind"] != "external" {
		t.Errorf("suppressed result %v", last)
	}
	var notes []string
	for _, n := range l.Runs[0].Invocations[0].Notifications {
		notes = append(notes, n.Message.Text)
	}
	got := strings.Join(notes, "\n")
	for _, want := range []string{"pod-sandbox-failures not-evaluated: v1/pods forbidden", "pdb-blocks-drain partial", "expired on 2026-11-01"} {
		if !strings.Contains(got, want) {
			t.Errorf("notifications lack %q:\n%s", want, got)
		}
	}
}

func mustRender(t *testing.T) []byte {
	_, raw := render(t, reporttest.Edges())
	return raw
}
