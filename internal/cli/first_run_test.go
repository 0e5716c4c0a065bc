package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report/text"
)

// demoDump writes the demo cluster's objects of the given kinds as one
// List, the way `kubectl get KINDS -A -o yaml` writes them, and returns
// its path: the partial dump a first-time user pastes from a ticket.
func demoDump(t *testing.T, kinds ...string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "demo", "cluster", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("demo files: %v", err)
	}
	want := map[string]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	var items []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range regexp.MustCompile(`(?m)^---$`).Split(string(b), -1) {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			list := []map[string]any{obj}
			if obj["kind"] == "List" {
				list = nil
				for _, it := range obj["items"].([]any) {
					list = append(list, it.(map[string]any))
				}
			}
			for _, it := range list {
				if k, _ := it["kind"].(string); want[k] {
					items = append(items, it)
				}
			}
		}
	}
	if len(items) == 0 {
		t.Fatalf("the demo holds no %v", kinds)
	}
	out, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dump.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var severityHeading = regexp.MustCompile(`^(CRITICAL|HIGH|MEDIUM|LOW|INFO) \(\d+\)$`)

// layout measures a rendered text report: the line of the first finding's
// heading (1-based; 0 when there is none) and the lines outside the
// findings, counted on the real output. Findings run from the index (one
// line per finding, each with its severity and ID) or the first severity
// heading to the coverage block (or the closing counts).
func layout(out string) (first, outside int) {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	in := false
	for i, l := range lines {
		switch {
		case severityHeading.MatchString(l) || strings.HasPrefix(l, text.IndexHeading+" ("):
			if first == 0 {
				first = i + 1
			}
			in = true
		case in && l != "" && !strings.HasPrefix(l, " "):
			in = false
		}
		if !in {
			outside++
		}
	}
	return first, outside
}

// TestFirstRunFindingsFirst keeps the budgets of the first real run: on a
// partial dump or a namespace scope, the first finding within the first
// 25 lines and at most 61 lines outside the findings. Resources that each
// leave one check incomplete share a coverage line (CoverageSummary.Folded),
// so a check reading one more resource does not need a larger budget.
func TestFirstRunFindingsFirst(t *testing.T) {
	three := demoDump(t, "Node", "Pod", "DaemonSet")
	getAll := demoDump(t, "Pod", "Service", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet", "Job", "CronJob")
	for name, args := range map[string][]string{
		"3-kind dump":     {"--from", three},
		"get all dump":    {"--from", getAll},
		"demo -n":         {"--demo", "-n", "payments"},
		"3-kind dump, -n": {"--from", three, "-n", "observability"},
	} {
		code, out, errOut := runKubegap(t, append([]string{"audit", "--color", "never"}, args...)...)
		if code == ExitError {
			t.Fatalf("%s: exit 2: %s", name, errOut)
		}
		first, outside := layout(out)
		t.Logf("%s: first finding on line %d, %d lines outside the findings, %d lines in all", name, first, outside, strings.Count(out, "\n"))
		if first == 0 || first > 25 || outside > 61 {
			t.Errorf("%s: first finding on line %d (budget 25), %d lines outside the findings (budget 61):\n%s", name, first, outside, out)
		}
		if !strings.Contains(out, "COVERAGE") || !strings.Contains(out, "--explain-coverage") {
			t.Errorf("%s: no coverage block after the findings:\n%s", name, out)
		}
		head := strings.Join(strings.Split(out, "\n")[:first-1], "\n")
		if strings.Contains(head, "not-in-input") || strings.Contains(head, "COULD NOT LOOK") {
			t.Errorf("%s: the header still lists coverage before the findings:\n%s", name, head)
		}
		if first > 8 {
			t.Errorf("%s: header of %d lines, want at most 6 before the first finding", name, first-2)
		}
		// -o summary has the same short header before its rows.
		_, sum, _ := runKubegap(t, append([]string{"audit", "--color", "never", "-o", "summary"}, args...)...)
		if row := regexp.MustCompile(`(?m)^(CRITICAL|HIGH|MEDIUM|LOW|INFO) +kg-`).FindStringIndex(sum); row == nil || strings.Count(sum[:row[0]], "\n") > 7 {
			t.Errorf("%s: -o summary: first row not within the first 8 lines:\n%s", name, sum)
		}
		// The detail is one flag away, and complete.
		_, full, _ := runKubegap(t, append([]string{"audit", "--color", "never", "--explain-coverage"}, args...)...)
		if !strings.Contains(full, "COULD NOT LOOK, RULE BY RULE") || strings.Count(full, "\n") <= strings.Count(out, "\n") {
			t.Errorf("%s: --explain-coverage adds no per-rule detail", name)
		}
	}
	// One line per resource the checks needed: the 3-kind dump names
	// events, and the scoped demo says its scope in one sentence.
	_, out, _ := runKubegap(t, "audit", "--from", three)
	if !regexp.MustCompile(`(?m)^  events: not in the input — \d+ checks? incomplete$`).MatchString(out) {
		t.Errorf("no one-line entry for events:\n%s", out)
	}
	if !strings.Contains(out, "to complete: kubegap recipe > recipe.sh") {
		t.Errorf("no command completing the audit:\n%s", out)
	}
	_, out, _ = runKubegap(t, "audit", "--demo", "-n", "payments")
	if strings.Count(out, "limited to namespace payments") != 1 {
		t.Errorf("the scope is not said once:\n%s", out)
	}
}

// TestChecksListOnlyWhatTheyRead: --checks narrows the coverage block to
// what those checks read.
func TestChecksListOnlyWhatTheyRead(t *testing.T) {
	three := demoDump(t, "Node", "Pod", "DaemonSet")
	_, out, _ := runKubegap(t, "audit", "--from", three, "--checks", "host-binary-glibc")
	for _, unrelated := range []string{"events", "deployments", "ingresses", "clusterroles"} {
		if regexp.MustCompile(`(?m)^  ` + unrelated + `:`).MatchString(out) {
			t.Errorf("--checks host-binary-glibc lists %s:\n%s", unrelated, out)
		}
	}
	if !regexp.MustCompile(`(?m)^  nodes: in the input, maybe not all`).MatchString(out) {
		t.Errorf("the nodes it reads are not listed:\n%s", out)
	}
}

// TestSummaryMarksNewAndListsResolved: -o summary, the CI gate, marks new
// rows, shows IDs and lists resolved findings by title.
func TestSummaryMarksNewAndListsResolved(t *testing.T) {
	dir := t.TempDir()
	prev := filepath.Join(dir, "prev.json")
	if code, _, _ := runKubegap(t, "audit", "--demo", "--skip-checks", "version-skew", "-o", "json", "--output-file", prev); code != ExitFindings {
		t.Fatal("writing the baseline")
	}
	gone := addGoneFinding(t, prev, "payments")
	_, out, _ := runWith(t, fixedApp(map[string]string{"COLUMNS": "200"}), "audit", "--demo", "-o", "summary", "--baseline", prev)
	_, r, _ := auditJSON(t, "--demo", "--baseline", prev)
	for _, f := range r.Findings {
		row := regexp.MustCompile(`(?m)^\S+ +(NEW )? *` + regexp.QuoteMeta(f.ID) + ` .*$`).FindString(out)
		if row == "" {
			t.Errorf("no row with ID %s:\n%s", f.ID, out)
			continue
		}
		if isNew := strings.Contains(row, " NEW "); isNew != (f.Baseline == "new") {
			t.Errorf("row %q: NEW mark %v, baseline %q", row, isNew, f.Baseline)
		}
	}
	if !strings.Contains(out, "RESOLVED SINCE") || !strings.Contains(out, gone.Title) {
		t.Errorf("summary does not list the resolved finding %q:\n%s", gone.Title, out)
	}
}

// addGoneFinding adds to a JSON report a finding about an object that is
// not in the demo (the gap was fixed and the object removed): a later
// audit that looks again must call it resolved.
func addGoneFinding(t *testing.T, path, ns string) finding.Finding {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	f := finding.Finding{Check: "pdb-blocks-drain", Severity: finding.High,
		Title:   "PodDisruptionBudget " + ns + "/retired never allows an eviction",
		Objects: []finding.ObjectRef{{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Namespace: ns, Name: "retired"}}}
	f.ID = finding.StableID(f)
	raw["findings"] = append(raw["findings"].([]any), f)
	if b, err = json.Marshal(raw); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBaselineNeverCallsUnseenResolved: a finding is resolved only when
// its check looked at its objects again; a scope, a partial dump or a
// skipped check leaves it "not re-checked". Scoping keeps IDs.
func TestBaselineNeverCallsUnseenResolved(t *testing.T) {
	dir := t.TempDir()
	prev := filepath.Join(dir, "full.json")
	if code, _, _ := runKubegap(t, "audit", "--demo", "-o", "json", "--output-file", prev); code != ExitFindings {
		t.Fatal("writing the baseline")
	}
	inScope := addGoneFinding(t, prev, "payments")
	outOfScope := addGoneFinding(t, prev, "observability")
	three := demoDump(t, "Node", "Pod", "DaemonSet")
	for name, args := range map[string][]string{
		"-n payments":  {"--demo", "-n", "payments"},
		"partial dump": {"--from", three},
		"skip a check": {"--demo", "--skip-checks", "image-pull-always"},
	} {
		_, r, errOut := auditJSON(t, append(args, "--baseline", prev)...)
		if r.Baseline == nil {
			t.Fatalf("%s: no baseline: %s", name, errOut)
		}
		for _, f := range r.Baseline.Resolved {
			if f.ID != inScope.ID && f.ID != outOfScope.ID {
				t.Errorf("%s: %s %q called resolved, though it is still in the demo", name, f.Check, f.Title)
			}
		}
		if len(r.Baseline.NotRechecked) == 0 {
			t.Errorf("%s: nothing listed as not re-checked", name)
		}
		for _, n := range r.Baseline.NotRechecked {
			if n.Why == "" {
				t.Errorf("%s: %q not re-checked without a reason", name, n.Finding.Title)
			}
		}
		if name != "partial dump" && r.Baseline.New != 0 {
			for _, f := range r.Findings {
				if f.Baseline == "new" {
					t.Errorf("%s: %s %q is new (ID %s)", name, f.Check, f.Title, f.ID)
				}
			}
		}
	}
	// Looking again at the object's namespace resolves what is gone from
	// it; an object outside the scope stays not re-checked.
	_, r, _ := auditJSON(t, "--demo", "-n", "payments", "--baseline", prev)
	resolved := map[string]bool{}
	for _, f := range r.Baseline.Resolved {
		resolved[f.ID] = true
	}
	if !resolved[inScope.ID] || resolved[outOfScope.ID] {
		t.Errorf("-n payments: resolved %v; want only %s (payments), not %s (observability)", r.Baseline.Resolved, inScope.ID, outOfScope.ID)
	}
	_, r, _ = auditJSON(t, "--demo", "--baseline", prev)
	if len(r.Baseline.Resolved) != 2 || len(r.Baseline.NotRechecked) != 0 || r.Baseline.New != 0 {
		t.Errorf("full demo against itself: %d resolved (want the 2 gone), %d not re-checked, %d new",
			len(r.Baseline.Resolved), len(r.Baseline.NotRechecked), r.Baseline.New)
	}
}

// TestNamespaceMustExist: -n naming a namespace a complete read does not
// hold is exit 2 with the namespaces that exist; where Namespaces were
// not read, the report says once that it could not be confirmed.
func TestNamespaceMustExist(t *testing.T) {
	code, out, errOut := runKubegap(t, "audit", "--demo", "-n", "nosuchns")
	if code != ExitError || out != "" || !strings.Contains(errOut, `namespace "nosuchns" does not exist`) || !strings.Contains(errOut, "payments") {
		t.Errorf("exit %d, stdout %q, stderr %q: want 2, nothing written, and the namespaces", code, out, errOut)
	}
	three := demoDump(t, "Node", "Pod", "DaemonSet")
	code, r, errOut := auditJSON(t, "--from", three, "-n", "nosuchns")
	if code == ExitError {
		t.Fatalf("files without Namespaces: exit 2 (%s); the namespace cannot be judged there", errOut)
	}
	n := 0
	for _, w := range r.Warnings {
		if strings.Contains(w, "could not be confirmed") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d warnings that the namespace could not be confirmed, want 1: %v", n, r.Warnings)
	}
}

// TestFailOnUnknownCountsWhatUsersCanComplete: on complete recipe dumps of
// fresh managed clusters, --fail-on-unknown passes (image inspection not
// requested, OS end dates unknown to kubegap); =all still fails there,
// and a partial dump fails either way.
func TestFailOnUnknownCountsWhatUsersCanComplete(t *testing.T) {
	for _, c := range []string{"kind", "aks", "eks", "gke"} {
		dir := filepath.Join("..", "checks", "testdata", "managed", c)
		code, r, errOut := auditJSON(t, "--from", dir, "--fail-on", "none", "--fail-on-unknown")
		if code != ExitOK {
			t.Errorf("%s: --fail-on-unknown exit %d (%s); completable: %v", c, code, errOut, r.UnknownCompletable())
		}
		if !r.Unknown() {
			continue // nothing opt-in or unknown left: =all passes too
		}
		if code, _, _ := auditJSON(t, "--from", dir, "--fail-on", "none", "--fail-on-unknown=all"); code != ExitFindings {
			t.Errorf("%s: --fail-on-unknown=all exit %d, want 1", c, code)
		}
		_, out, _ := runKubegap(t, "audit", "--from", dir, "--fail-on", "none")
		if !strings.Contains(out, "not requested") {
			t.Errorf("%s: the coverage block does not say what was not requested:\n%s", c, out)
		}
	}
	three := demoDump(t, "Node", "Pod", "DaemonSet")
	if code, _, _ := auditJSON(t, "--from", three, "--fail-on", "none", "--fail-on-unknown"); code != ExitFindings {
		t.Errorf("partial dump: --fail-on-unknown exit %d, want 1", code)
	}
	if code, _, errOut := runKubegap(t, "audit", "--demo", "--fail-on-unknown=some"); code != ExitError || !strings.Contains(errOut, "--fail-on-unknown") {
		t.Errorf("bad value: exit %d, %q", code, errOut)
	}
}

// TestHTMLReportGapsInProportion: the HTML report's "not everything was
// evaluated" panel follows the findings and holds one item per resource,
// not every rule's reasons.
func TestHTMLReportGapsInProportion(t *testing.T) {
	three := demoDump(t, "Node", "Pod", "DaemonSet")
	_, page, _ := runKubegap(t, "audit", "--from", three, "-o", "html")
	_, r, _ := auditJSON(t, "--from", three)
	gaps := strings.Index(page, `id="gaps"`)
	end := gaps + strings.Index(page[max(gaps, 0):], "</section>")
	findings, checks := strings.Index(page, `id="findings-h"`), strings.Index(page, `id="checks-h"`)
	if gaps < 0 || gaps < findings || end > checks {
		t.Fatalf("panel at %d..%d, findings at %d, checks table at %d: want the panel between them", gaps, end, findings, checks)
	}
	panel := page[gaps:end]
	if items, want := strings.Count(panel, "<li>"), len(r.MissingInputs); items != want {
		t.Errorf("panel has %d items, want one per missing resource (%d)", items, want)
	}
	if len(panel) > 8<<10 {
		t.Errorf("panel of %d bytes (%d%% of the page), want at most 8 KiB", len(panel), 100*len(panel)/len(page))
	}
}
