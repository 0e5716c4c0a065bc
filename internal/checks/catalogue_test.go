package checks

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/library"
)

// catalogue renders docs/checks.md from the registry and the library.
func catalogue(lib *library.Library) []byte {
	title := func(id string) string {
		if c, ok := lib.Case(id); ok {
			return c.Title
		}
		return ""
	}
	var b bytes.Buffer
	b.WriteString("# Checks\n\n")
	b.WriteString("Generated from the check registry by `UPDATE_DOCS=1 go test ./internal/checks -run TestCatalogue`;\n")
	b.WriteString("a test fails when this file and the code disagree. `kubegap checks show ID` prints the same.\n\n")
	b.WriteString("Each check is one file in its area package, `internal/checks/<area>/` (the area is a result's category in\n")
	b.WriteString("reports). [Add a check](../README.md#add-a-check) in the README says how to add one: the file, one case link\n")
	b.WriteString("with its relation, fixtures with and without the gap, and the managed-cluster run.\n\n")
	b.WriteString("Each cited case says what the check does for that incident: **prevents** (run on the cluster as it was\n")
	b.WriteString("before the incident, the check flags the gap that caused it), **detects** (it flags the incident while under\n")
	b.WriteString("way, from its symptoms or the objects its trigger created) or **related** (same mechanism, a trigger the check\n")
	b.WriteString("does not see). `TestEveryCaseLinkHasItsFixture` runs each check on a pre-incident (prevents) or in-incident\n")
	b.WriteString("(detects) fixture and fails unless a finding cites the case; see [cases](cases.md#how-a-case-links-to-checks).\n\n")
	b.WriteString("| ID | up to | title |\n|---|---|---|\n")
	for _, c := range All() {
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s |\n", c.ID, c.ID, c.Severity, c.Title)
	}
	for _, c := range All() {
		info := check.Describe(c, title)
		run := "kubegap audit --checks " + c.ID
		if c.Preflight {
			// As present.AuditCommand prints it (present imports this
			// package, so it cannot be called here); the suggested-command
			// test in internal/cli runs this line.
			run += " --target-version 1.36"
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\nSeverity: up to **%s**. Run it alone: `%s`\n\nReads:\n\n", c.ID, c.Description, c.Severity, run)
		for _, in := range info.Reads {
			fmt.Fprintf(&b, "- `%s`\n", in.Resource)
		}
		b.WriteString("\nRules (each passes only when what it needs was read completely; see [verdicts](verdicts.md)):\n\n")
		for _, r := range info.Rules {
			needs := strings.Join(r.Needs, ", ")
			if needs == "" {
				needs = "no listed resource"
			}
			fmt.Fprintf(&b, "- `%s`: %s (needs %s)\n", r.ID, r.Summary, needs)
		}
		b.WriteString("\nCases:\n\n")
		for _, cr := range info.Cases {
			fmt.Fprintf(&b, "- `%s` (**%s**): %s\n", cr.ID, cr.Relation, cr.Title)
		}
	}
	return b.Bytes()
}

// TestCatalogue keeps docs/checks.md true to the code.
func TestCatalogue(t *testing.T) {
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	want := catalogue(lib)
	const path = "../../docs/checks.md"
	if os.Getenv("UPDATE_DOCS") != "" {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/checks.md is stale: run UPDATE_DOCS=1 go test ./internal/checks -run TestCatalogue (first difference near %q)",
			firstDiff(string(got), string(want)))
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return bl[i]
		}
	}
	return "(length differs)"
}
