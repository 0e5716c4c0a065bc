// Package audit runs checks over a snapshot and builds the report: it picks
// the enabled checks, marks those whose inputs could not be read as
// not-evaluated, runs the rest, and sorts and counts the findings.
package audit

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/checks/upgrade"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/owner"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Select returns the checks to run: all of them, or only those in enable,
// minus those in skip. IDs are taken as the CLI's `checks show` takes
// them (checks.Find): in any case, or by a prefix only one ID of all
// starts with. An unknown ID is an error naming the nearest IDs; a shared
// prefix, one naming the IDs that share it.
func Select(all []check.Check, enable, skip []string) ([]check.Check, error) {
	enable, err := ResolveIDs(all, enable)
	if err != nil {
		return nil, err
	}
	skip, err = ResolveIDs(all, skip)
	if err != nil {
		return nil, err
	}
	on := map[string]bool{}
	for _, id := range enable {
		on[id] = true
	}
	off := map[string]bool{}
	for _, id := range skip {
		off[id] = true
	}
	var out []check.Check
	for _, c := range all {
		if (len(enable) == 0 || on[c.ID]) && !off[c.ID] {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no check left to run after --checks and --skip-checks")
	}
	return out, nil
}

// ResolveIDs maps each of ids to the ID of the one check of all it names:
// the ID in any case, or a prefix only one ID starts with (an exact ID
// wins over a longer one it prefixes).
func ResolveIDs(all []check.Check, ids []string) ([]string, error) {
	var known []string
	for _, c := range all {
		known = append(known, c.ID)
	}
	var out []string
	for _, id := range ids {
		want := strings.ToLower(strings.TrimSpace(id))
		var found []string
		for _, k := range known {
			if k == want {
				found = []string{k}
				break
			}
			if want != "" && strings.HasPrefix(k, want) {
				found = append(found, k)
			}
		}
		switch len(found) {
		case 1:
			out = append(out, found[0])
		case 0:
			return nil, fmt.Errorf("unknown check %q%s", id, checks.DidYouMean(id, known, "kubegap checks list"))
		default:
			return nil, fmt.Errorf("check %q is ambiguous: it starts %s; give more of the ID", id, strings.Join(found, ", "))
		}
	}
	return out, nil
}

// Resources is the union of what the checks read, in the order of
// snapshot.Known: exactly what a live audit lists.
func Resources(cs []check.Check) []snapshot.Resource {
	need := map[snapshot.Resource]bool{}
	for _, c := range cs {
		for _, in := range c.Reads {
			need[in.Resource] = true
		}
	}
	var out []snapshot.Resource
	for _, r := range snapshot.Known() {
		if need[r] {
			out = append(out, r)
		}
	}
	return out
}

// Options tune a run.
type Options struct {
	// Images holds --inspect-images results for the checks; nil without it.
	Images map[string]check.ImageFacts
	// Target is --target-version: checks also judge an upgrade to it, and
	// preflight checks run. Nil for a plain audit.
	Target *check.KubeVersion
	// Declared is completeness the user declares for file input
	// (--complete, --complete-kinds; see snapshot.Declaration). Run
	// applies it to the snapshot before the checks, and the report's
	// source lists it as declared.
	Declared snapshot.Declaration
}

// ParseTarget reads an upgrade target, "1.35", "v1.35" or "1.35.2", given
// by the option option (--target-version, target_version). A target past
// the newest minor kubegap's upgrade tables know is refused, naming that
// minor: no table could judge an upgrade there, and a preflight that
// "passes" at 1.99 would claim what nothing knows. Empty is no target.
func ParseTarget(option, s string) (*check.KubeVersion, error) {
	if s == "" {
		return nil, nil
	}
	v, ok := check.ParseKubeVersion(s)
	if !ok || v.Major != 1 {
		return nil, fmt.Errorf("%s %q: want a Kubernetes version such as 1.35", option, s)
	}
	newest, err := upgrade.NewestKnownMinor()
	if err != nil {
		return nil, err
	}
	if newest.Less(check.KubeVersion{Major: v.Major, Minor: v.Minor}) {
		return nil, fmt.Errorf("%s %s: kubegap's upgrade tables know Kubernetes minors up to %s, so an upgrade to %s cannot be judged (use %s or older, or a newer kubegap)",
			option, v.MinorString(), newest.MinorString(), v.MinorString(), newest.MinorString())
	}
	return &v, nil
}

// Choose returns the checks an audit runs: Select over every check, then
// without an upgrade target the preflight checks are dropped (nothing
// about upgrades is reported), except one named in enable. That one is
// known without a target, so --checks upgrade-preflight is no "unknown
// check", and reported not evaluated with what it needs.
func Choose(all []check.Check, enable, skip []string, target *check.KubeVersion) ([]check.Check, error) {
	selected, err := Select(all, enable, skip)
	if err != nil || target != nil {
		return selected, err
	}
	// Select has resolved them all: the preflight checks asked for by
	// prefix or in capitals are the ones enable names.
	enable, _ = ResolveIDs(all, enable)
	var out []check.Check
	for _, c := range selected {
		switch {
		case !c.Preflight:
			out = append(out, c)
		case slices.Contains(enable, c.ID):
			out = append(out, needsTarget(c))
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no check left to run: the preflight checks run only with --target-version")
	}
	return out, nil
}

// needsTarget is a preflight check asked for without a target: it runs
// in any audit and says it is not evaluated, and which target to give.
func needsTarget(c check.Check) check.Check {
	c.Preflight = false
	c.Run = func(ctx *check.Context) ([]finding.Finding, error) {
		why := "needs --target-version 1.N (target_version over MCP), the Kubernetes minor an upgrade would reach"
		cp, _, known := check.ServerVersion(ctx.Snapshot)
		if newest, err := upgrade.NewestKnownMinor(); err == nil && known && cp.Less(newest) {
			next := check.KubeVersion{Major: cp.Major, Minor: cp.Minor + 1}
			why += fmt.Sprintf(": --target-version %s is the minor after the control plane's %s", next.MinorString(), cp.MinorString())
		}
		return nil, check.NotEvaluated("%s", why)
	}
	return c
}

// ForTarget drops the preflight checks from cs unless an upgrade target is
// given: without --target-version nothing about upgrades is reported.
func ForTarget(cs []check.Check, target *check.KubeVersion) []check.Check {
	if target != nil {
		return cs
	}
	var out []check.Check
	for _, c := range cs {
		if !c.Preflight {
			out = append(out, c)
		}
	}
	return out
}

// Run runs the checks over the snapshot. It never fails: a check that
// cannot answer, errs or panics is reported not-evaluated with the reason,
// and the other checks still run.
//
// Every check runs on whatever of its inputs are present, so a finding the
// objects prove is never hidden because some other input is missing. Its
// status then says how far its silence can be trusted: pass only when every
// rule ran on complete input (see check.Context.Complete).
func Run(s *snapshot.Snapshot, cs []check.Check, opts Options) *report.Report {
	if !opts.Declared.Empty() {
		s.Declare(opts.Declared)
	}
	r := report.New(s.Source, s.Coverage())
	if opts.Images == nil && s.Source.Type == snapshot.SourceDemo {
		// The demo's made-up registries cannot be read; it ships what an
		// inspection would find (internal/demo/images.yaml).
		if facts, err := demo.ImageFacts(); err == nil {
			opts.Images = facts
		}
	}
	if opts.Target != nil {
		r.TargetVersion = opts.Target.MinorString()
		cur := check.InferCurrentVersion(s, opts.Target)
		r.CurrentVersion = &report.CurrentVersion{Version: cur.Text(), Inferred: !cur.Exact, Basis: cur.Basis}
	}
	for _, c := range ForTarget(cs, opts.Target) {
		ctx := &check.Context{Snapshot: s, Images: opts.Images, Target: opts.Target}
		res := report.CheckResult{ID: c.ID, Title: c.Title}
		fs, err := runOne(c, ctx)
		res.Rules = ruleResults(s, c, ctx)
		switch {
		case errors.Is(err, check.ErrNotEvaluated):
			res.Status = report.NotEvaluated
			res.Reason = strings.TrimPrefix(err.Error(), check.ErrNotEvaluated.Error()+": ")
			// Name what was missing too: "no nodes" may mean "nodes forbidden".
			if why := incompleteReason(res.Rules); why != "" {
				res.Reason += " (" + why + ")"
			}
			skipAll(res.Rules, res.Reason)
			fs = nil
		case err != nil:
			res.Status, res.Reason = report.NotEvaluated, "check failed: "+err.Error()
			skipAll(res.Rules, res.Reason)
			fs = nil
		case len(fs) > 0:
			res.Status, res.Findings = report.Fail, len(fs)
			r.Findings = append(r.Findings, fs...)
			res.Reason = incompleteReason(res.Rules)
		default:
			res.Status, res.Reason = statusOf(res.Rules)
		}
		r.Checks = append(r.Checks, res)
	}
	if note := ScopeNote(s); note != "" {
		r.Warnings = append(r.Warnings, note)
	}
	// Say which findings are about a managed provider's own objects, for
	// every check at once (internal/owner).
	if err := owner.Mark(s, r.Findings); err != nil {
		r.Warnings = append(r.Warnings, "provider-owned objects not marked: "+err.Error())
	}
	r.Finish()
	return r
}

// ruleResults judges each rule of c: by the completeness of the inputs it
// needs, then by what the check itself said while running.
func ruleResults(s *snapshot.Snapshot, c check.Check, ctx *check.Context) []report.RuleResult {
	notes := ctx.Notes()
	var out []report.RuleResult
	for _, rule := range check.RulesOf(c) {
		rr := report.RuleResult{ID: rule.ID, Status: report.RuleEvaluated}
		gaps := map[string][]string{}
		var order []string
		present := len(rule.Needs) == 0
		for _, need := range rule.Needs {
			if ctx.Present(need) {
				present = true
			}
			if ctx.Complete(need) {
				continue
			}
			rr.Missing = append(rr.Missing, need.String())
			g := inputGap(s, need)
			if _, ok := gaps[g]; !ok {
				order = append(order, g)
			}
			gaps[g] = append(gaps[g], snapshot.RecipeName(need))
		}
		var why []string
		for _, g := range order {
			why = append(why, g+": "+strings.Join(gaps[g], ", "))
		}
		if len(why) > 0 {
			rr.Status = report.RulePartial
			if !present {
				rr.Status = report.RuleSkipped
			}
		}
		category := report.CategoryInput
		if n, ok := notes[rule.ID]; ok {
			why = append([]string{n.Reason}, why...)
			rr.Noted = true
			if n.Skipped {
				rr.Status = report.RuleSkipped
			} else if rr.Status == report.RuleEvaluated && n.Kind != check.Settled {
				rr.Status = report.RulePartial
			}
			// Missing input is the user's to complete, whatever else
			// the rule lacks.
			if len(rr.Missing) == 0 {
				category = categoryOf(n.Kind)
			}
		}
		if rr.Status != report.RuleEvaluated {
			rr.Category = category
		}
		rr.Reason = strings.Join(why, "; ")
		out = append(out, rr)
	}
	return out
}

// inputGap names the way r falls short of complete, as a report reader
// needs it; resources that fall short the same way are listed together.
func inputGap(s *snapshot.Snapshot, r snapshot.Resource) string {
	cov := s.Status(r)
	switch {
	case cov.Complete && len(cov.Namespaces) > 0:
		return "read only in " + snapshot.Scope{Namespaces: cov.Namespaces}.String()
	case cov.Status == snapshot.StatusRead && cov.Count > 0:
		return "in the input, but not known to be all there is"
	case cov.Status == snapshot.StatusRead, cov.Status == snapshot.StatusNotInInput:
		return "not in the input"
	case cov.Status == snapshot.StatusNotRead:
		return "not read"
	}
	msg := string(cov.Status)
	if cov.Message != "" {
		msg += " (" + cov.Message + ")"
	}
	return msg
}

func skipAll(rules []report.RuleResult, reason string) {
	for i := range rules {
		rules[i].Status, rules[i].Reason = report.RuleSkipped, reason
		if rules[i].Category == "" {
			rules[i].Category = report.CategoryInput
		}
	}
}

// categoryOf maps what a check said a rule lacks to the report's category.
func categoryOf(k check.NoteKind) string {
	switch k {
	case check.NeedsOptIn:
		return report.CategoryOptIn
	case check.NeedsKnowledge:
		return report.CategoryKnowledge
	}
	return report.CategoryInput
}

// statusOf is the status of a check that found nothing.
func statusOf(rules []report.RuleResult) (report.Status, string) {
	skipped, partial := 0, 0
	for _, rr := range rules {
		switch rr.Status {
		case report.RuleSkipped:
			skipped++
		case report.RulePartial:
			partial++
		}
	}
	switch {
	case skipped == len(rules):
		return report.NotEvaluated, incompleteReason(rules)
	case skipped+partial > 0:
		return report.Partial, incompleteReason(rules)
	}
	return report.Pass, ""
}

// incompleteReason sums up the rules that did not run on complete input.
func incompleteReason(rules []report.RuleResult) string {
	var why []string
	for _, rr := range rules {
		if rr.Status != report.RuleEvaluated {
			why = append(why, rr.ID+" "+string(rr.Status)+": "+rr.Reason)
		}
	}
	return strings.Join(why, "; ")
}

// runOne runs a check, turning a panic into an error so one broken check
// cannot end the audit.
func runOne(c check.Check, ctx *check.Context) (fs []finding.Finding, err error) {
	defer func() {
		if p := recover(); p != nil {
			fs, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	fs, err = c.Run(ctx)
	for i := range fs {
		if fs[i].Check == "" {
			fs[i].Check = c.ID
		}
		c.LinkCases(&fs[i])
	}
	return fs, err
}
