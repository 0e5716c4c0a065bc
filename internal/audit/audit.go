// Package audit runs checks over a snapshot and builds the report: it picks
// the enabled checks, marks those whose inputs could not be read as
// not-evaluated, runs the rest, and sorts and counts the findings.
package audit

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Select returns the checks to run: all of them, or only those in enable,
// minus those in skip. An unknown ID is an error naming the known ones.
func Select(all []checks.Check, enable, skip []string) ([]checks.Check, error) {
	known := map[string]bool{}
	var ids []string
	for _, c := range all {
		known[c.ID] = true
		ids = append(ids, c.ID)
	}
	for _, id := range append(append([]string{}, enable...), skip...) {
		if !known[id] {
			return nil, fmt.Errorf("unknown check %q (known: %s)", id, strings.Join(ids, ", "))
		}
	}
	on := map[string]bool{}
	for _, id := range enable {
		on[id] = true
	}
	off := map[string]bool{}
	for _, id := range skip {
		off[id] = true
	}
	var out []checks.Check
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

// Resources is the union of what the checks read, in the order of
// snapshot.Known: exactly what a live audit lists.
func Resources(cs []checks.Check) []snapshot.Resource {
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
	Images map[string]checks.ImageFacts
}

// Run runs the checks over the snapshot. It never fails: a check that
// cannot answer, errs or panics is reported not-evaluated with the reason,
// and the other checks still run.
func Run(s *snapshot.Snapshot, cs []checks.Check, opts Options) *report.Report {
	r := report.New(s.Source, s.Coverage())
	ctx := &checks.Context{Snapshot: s, Images: opts.Images}
	for _, c := range cs {
		res := report.CheckResult{ID: c.ID, Title: c.Title}
		if reason := missingInput(s, c); reason != "" {
			res.Status, res.Reason = report.NotEvaluated, reason
			r.Checks = append(r.Checks, res)
			continue
		}
		fs, err := runOne(c, ctx)
		switch {
		case errors.Is(err, checks.ErrNotEvaluated):
			res.Status = report.NotEvaluated
			res.Reason = strings.TrimPrefix(err.Error(), checks.ErrNotEvaluated.Error()+": ")
		case err != nil:
			res.Status, res.Reason = report.NotEvaluated, "check failed: "+err.Error()
		case len(fs) > 0:
			res.Status, res.Findings = report.Fail, len(fs)
			r.Findings = append(r.Findings, fs...)
		default:
			res.Status = report.Pass
		}
		r.Checks = append(r.Checks, res)
	}
	r.Finish()
	return r
}

// runOne runs a check, turning a panic into an error so one broken check
// cannot end the audit.
func runOne(c checks.Check, ctx *checks.Context) (fs []finding.Finding, err error) {
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
	}
	return fs, err
}

// missingInput explains why a check cannot run on this snapshot, or returns
// "" when every required input was read.
func missingInput(s *snapshot.Snapshot, c checks.Check) string {
	var why []string
	for _, in := range c.Reads {
		if in.Optional {
			continue
		}
		cov := s.Status(in.Resource)
		switch cov.Status {
		case snapshot.StatusRead:
		case snapshot.StatusNotRead:
			why = append(why, in.Resource.String()+" was not read")
		default:
			msg := in.Resource.String() + " " + string(cov.Status)
			if cov.Message != "" {
				msg += " (" + cov.Message + ")"
			}
			why = append(why, msg)
		}
	}
	sort.Strings(why)
	return strings.Join(why, "; ")
}
