// Package check is what every kubegap check is made of: the Check itself,
// its rules and inputs, the Context it runs on, and the helpers checks
// share. Checks live in the area packages (internal/checks/<area>);
// internal/checks lists them all.
package check

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Check is one audit check.
type Check struct {
	// ID is stable: users select and suppress checks by it. Lowercase, hyphenated.
	ID    string
	Title string
	// Severity is the highest severity the check reports.
	Severity finding.Severity
	// Description says what the check looks for and why, in a few sentences.
	Description string
	// Reads are the resources the check needs. The live reader lists exactly
	// the union of the enabled checks' Reads; a required resource that could
	// not be read makes the check not-evaluated, never pass.
	Reads []Input
	// Rules are the questions the check answers, each with the inputs its
	// "nothing found" depends on. A check is pass only when every rule ran
	// on complete input; see Context.Complete. A check without Rules has
	// one rule, named after the check, that needs every input in Reads.
	Rules []Rule
	// Cases are the incident library cases the check cites, each with
	// what the check does for it: Prevents, Detects or Related (see
	// caselink.go). A Prevents or Detects link needs a fixture in
	// internal/checks' caseFixtures that the check flags.
	Cases []CaseLink
	// Preflight checks answer only "what will an upgrade to the target
	// version break" and run only with --target-version; other checks may
	// also judge the target when Context.Target is set.
	Preflight bool
	// Run looks for the gap. It returns ErrNotEvaluated (wrapped with the
	// reason) when the snapshot cannot answer the question.
	Run func(*Context) ([]finding.Finding, error)
}

// Rule is one question a check answers.
type Rule struct {
	// ID is stable within the check, lowercase and hyphenated.
	ID string
	// Summary says what the rule looks for, in one line.
	Summary string
	// Needs are the resources that must be complete (every object in
	// scope present) for the rule's silence to prove anything. Findings
	// from the objects that are present are reported either way.
	Needs []snapshot.Resource
}

// Input is one resource a check reads.
type Input struct {
	Resource snapshot.Resource
	// Optional inputs may be missing: a NetworkAttachmentDefinition CRD that
	// is not served means there are no attachments, not an unknown answer.
	Optional bool
}

// Needs lists required inputs.
func Needs(rs ...snapshot.Resource) []Input {
	in := make([]Input, len(rs))
	for i, r := range rs {
		in[i] = Input{Resource: r}
	}
	return in
}

// Optional marks an input as optional.
func Optional(r snapshot.Resource) Input { return Input{Resource: r, Optional: true} }

// Context is what a check runs on.
type Context struct {
	Snapshot *snapshot.Snapshot
	// Images holds what --inspect-images learned about images, keyed by the
	// image reference as written in the pod spec. Nil without the flag.
	Images map[string]ImageFacts

	// Target is the Kubernetes version an upgrade preflight judges the
	// cluster against (--target-version); nil for a plain audit. Findings
	// about the target carry finding.Finding.Preflight.
	Target *KubeVersion

	// notes are what the check said about its rules while running.
	notes map[string]*ruleNotes
}

// RuleNote is what a check said about one rule while it ran: that it was
// skipped, or ran on objects it could not fully judge.
type RuleNote struct {
	Skipped bool
	Reason  string
	// Kind says what would complete the rule: more input (the default),
	// an opt-in source, or knowledge kubegap does not have.
	Kind NoteKind
}

// NoteKind is what a partial or skipped rule lacks, so that a reader (and
// --fail-on-unknown) can tell what a user can complete from what they
// cannot.
type NoteKind string

// Note kinds.
const (
	// NeedsInput: objects, a namespace or a permission the user can add
	// (the zero value, as most notes are).
	NeedsInput NoteKind = ""
	// NeedsOptIn: a source the user did not ask for, such as the image
	// registries --inspect-images reads.
	NeedsOptIn NoteKind = "opt-in"
	// NeedsKnowledge: a fact kubegap does not hold (an OS release with no
	// sourced end of support) or the Kubernetes API does not show.
	NeedsKnowledge NoteKind = "knowledge"
	// Settled: the rule ran on complete input and its note says why
	// nothing was left to judge (an upgrade already done); the rule stays
	// evaluated, never partial.
	Settled NoteKind = "settled"
)

// Complete reports whether every object of r in the whole cluster is in
// the snapshot, so that an object missing from it does not exist. False
// for plain files, for reads limited to some namespaces (namespaced r),
// and for anything forbidden, failed or not read. A resource the API
// server does not serve is complete: there are none.
func (c *Context) Complete(r snapshot.Resource) bool {
	cov := c.Snapshot.Status(r)
	return cov.Complete && (len(cov.Namespaces) == 0 || !r.Namespaced)
}

// CompleteIn reports whether every object of r in namespace ns is in the
// snapshot: Complete, or a complete read scoped to namespaces holding ns.
func (c *Context) CompleteIn(r snapshot.Resource, ns string) bool {
	cov := c.Snapshot.Status(r)
	if !cov.Complete {
		return false
	}
	if len(cov.Namespaces) == 0 || !r.Namespaced {
		return true
	}
	for _, n := range cov.Namespaces {
		if n == ns {
			return true
		}
	}
	return false
}

// Present reports whether the snapshot holds any view of r: objects read
// (completely or not) or a complete read that found none.
func (c *Context) Present(r snapshot.Resource) bool {
	cov := c.Snapshot.Status(r)
	return cov.Complete || cov.Status == snapshot.StatusRead && cov.Count > 0
}

// Skip records that a rule could not run at all, with the reason.
func (c *Context) Skip(rule, format string, args ...any) {
	c.note(rule, RuleNote{Skipped: true, Reason: fmt.Sprintf(format, args...)})
}

// Incomplete records that a rule ran, but on objects it could not fully
// judge (an OS image it does not know, a server version it could not
// learn): its silence proves nothing. Findings it made still stand.
func (c *Context) Incomplete(rule, format string, args ...any) {
	c.note(rule, RuleNote{Reason: fmt.Sprintf(format, args...)})
}

// NotRequested is Incomplete for a rule that needs a source the user must
// opt in to (--inspect-images): not a gap in the input.
func (c *Context) NotRequested(rule, format string, args ...any) {
	c.note(rule, RuleNote{Reason: fmt.Sprintf(format, args...), Kind: NeedsOptIn})
}

// Unknowable is Incomplete for a rule that lacks knowledge kubegap does
// not hold or the cluster's API does not show: no input completes it.
func (c *Context) Unknowable(rule, format string, args ...any) {
	c.note(rule, RuleNote{Reason: fmt.Sprintf(format, args...), Kind: NeedsKnowledge})
}

// Done records that a rule ran on complete input and found its subject
// already settled, with the reason: evaluated, not partial.
func (c *Context) Done(rule, format string, args ...any) {
	c.note(rule, RuleNote{Reason: fmt.Sprintf(format, args...), Kind: Settled})
}

func (c *Context) note(rule string, n RuleNote) {
	if c.notes == nil {
		c.notes = map[string]*ruleNotes{}
	}
	old := c.notes[rule]
	switch {
	case old == nil:
	case old.Skipped && !n.Skipped:
		return // a skip outranks a partial note
	case old.Skipped == n.Skipped && !old.reasonIs(n.Reason):
		old.add(n.Reason)
		// What the user can complete outranks what they cannot: the
		// rule stays theirs to finish while any input is missing.
		if old.Kind == NeedsInput || n.Kind == NeedsInput {
			old.Kind = NeedsInput
		} else if old.Kind == NeedsOptIn {
			old.Kind = NeedsOptIn
		} else if n.Kind != Settled {
			// Otherwise the new kind, but a partial note outranks a
			// settled one.
			old.Kind = n.Kind
		}
		return
	}
	c.notes[rule] = newRuleNotes(n)
}

// Notes returns what the check said about its rules, by rule ID.
func (c *Context) Notes() map[string]RuleNote {
	if c.notes == nil {
		return nil
	}
	out := make(map[string]RuleNote, len(c.notes))
	for rule, n := range c.notes {
		out[rule] = n.note()
	}
	return out
}

// RulesOf returns c's rules, or its one implicit rule.
//
// A required input (in Reads, not Optional) that no rule Needs is added to
// the Needs of every rule: Reads promise that such an input, unread, never
// lets the check pass, and a rule list that forgot it must not break that
// promise. Every verdict and every description goes through here, so the
// audit and `kubegap checks show` agree on what each rule needs. The
// registry's tests keep the checks kubegap ships from relying on this
// (each required input is in the Needs of the rule it matters to, which
// names it better than every rule); it is the floor for any other.
func RulesOf(c Check) []Rule {
	if len(c.Rules) == 0 {
		r := Rule{ID: c.ID, Summary: c.Title}
		for _, in := range c.Reads {
			r.Needs = append(r.Needs, in.Resource)
		}
		return []Rule{r}
	}
	uncovered := UnneededReads(c)
	if len(uncovered) == 0 {
		return c.Rules
	}
	out := make([]Rule, len(c.Rules))
	for i, r := range c.Rules {
		r.Needs = append(slices.Clip(r.Needs), uncovered...)
		out[i] = r
	}
	return out
}

// UnneededReads lists c's required inputs that none of its own Rules
// names in Needs, in the order of Reads. None for a check without Rules:
// its one implicit rule needs every input.
func UnneededReads(c Check) []snapshot.Resource {
	if len(c.Rules) == 0 {
		return nil
	}
	needed := map[snapshot.Resource]bool{}
	for _, r := range c.Rules {
		for _, n := range r.Needs {
			needed[n] = true
		}
	}
	var out []snapshot.Resource
	for _, in := range c.Reads {
		if !in.Optional && !needed[in.Resource] {
			needed[in.Resource] = true
			out = append(out, in.Resource)
		}
	}
	return out
}

// ImageFacts is what inspecting one image showed about its executables.
type ImageFacts struct {
	Image  string `json:"image"`
	Digest string `json:"digest,omitempty"`
	// MaxGlibc is the highest GLIBC_x.y needed by an executable the image
	// may install on a host: embedded payloads, and programs outside the
	// base OS's own directories. Empty when none needs glibc.
	MaxGlibc string `json:"maxGlibc,omitempty"`
	// Executables lists those executables with their need, e.g.
	// "/usr/bin/dropgz!azure-vnet: GLIBC_2.34".
	Executables []string `json:"executables,omitempty"`
	// ShippedGlibc is the glibc the image itself carries: what its programs
	// get inside the container, not on the host.
	ShippedGlibc string `json:"shippedGlibc,omitempty"`
	// MaxGlibcxx and MaxCxxabi are the highest GLIBCXX_x.y.z and
	// CXXABI_x.y versions those executables need from the host's
	// libstdc++.so.6. Empty when none is C++ linked against it.
	MaxGlibcxx string `json:"maxGlibcxx,omitempty"`
	MaxCxxabi  string `json:"maxCxxabi,omitempty"`
	// Musl lists those executables linked against musl, with their
	// loader, e.g. "/opt/cni/bin/x: musl, loader /lib/ld-musl-x86_64.so.1":
	// a glibc host has no such loader, so they cannot start there.
	Musl []string `json:"musl,omitempty"`
	// Interpreters lists the PT_INTERP loader paths those executables
	// need on the host, sorted.
	Interpreters []string `json:"interpreters,omitempty"`
	// MediaType is the media type of the image's manifest, e.g.
	// application/vnd.docker.distribution.manifest.v1+prettyjws for a
	// Docker schema 1 image, whose layers are then not read.
	MediaType string `json:"mediaType,omitempty"`
	// LayersRead is true when the image's files were read; false when
	// only its manifest was (schema 1, or an audit that needed no more).
	LayersRead bool `json:"layersRead,omitempty"`
	// Java lists the Java runtimes found in the image, from the `release`
	// file a JDK or JRE carries in its home directory. Empty when none was
	// found or the layers were not read (see MediaType and Err).
	Java []JavaRuntime `json:"java,omitempty"`
	// Err is why the image could not be inspected, if it could not.
	Err string `json:"error,omitempty"`
}

// JavaRuntime is one JDK or JRE found in an image, read from its
// `release` file (never from environment variables).
type JavaRuntime struct {
	// Home is the directory holding the release file, e.g. /opt/java/openjdk.
	Home string `json:"home"`
	// Version is JAVA_VERSION, e.g. "11.0.14" or "1.8.0_372".
	Version string `json:"version"`
	// Date is JAVA_VERSION_DATE (YYYY-MM-DD) when the file has it.
	Date string `json:"date,omitempty"`
	// VM is JVM_VARIANT when the file has it, e.g. "Hotspot" or "Openj9".
	VM string `json:"vm,omitempty"`
	// Implementor is IMPLEMENTOR when the file has it, e.g.
	// "Eclipse Adoptium" or "Amazon.com Inc.".
	Implementor string `json:"implementor,omitempty"`
}

// ErrNotEvaluated marks a check that could not answer. Wrap it with the
// reason: fmt.Errorf("%w: no node reports its OS", ErrNotEvaluated).
var ErrNotEvaluated = errors.New("not evaluated")

// NotEvaluated returns ErrNotEvaluated with a reason.
func NotEvaluated(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotEvaluated, fmt.Sprintf(format, args...))
}
