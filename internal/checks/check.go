// Package checks holds kubegap's checks: the founding checks, one file
// each, and the area packages below it (internal/checks/<area>), all listed
// once in registry.go. A check reads the snapshot and returns findings; it
// never talks to a cluster. The types checks are made of live in
// internal/check; the names below keep them at hand here.
package checks

import (
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// The types and constructors of package check, under their old names.
type (
	// Check is one audit check.
	Check = check.Check
	// Rule is one question a check answers.
	Rule = check.Rule
	// Input is one resource a check reads.
	Input = check.Input
	// Context is what a check runs on.
	Context = check.Context
	// RuleNote is what a check said about one rule while it ran.
	RuleNote = check.RuleNote
	// ImageFacts is what inspecting one image showed.
	ImageFacts = check.ImageFacts
	// JavaRuntime is a JDK or JRE found in an image.
	JavaRuntime = check.JavaRuntime
	// Info describes a check for people and agents.
	Info = check.Info
	// InputInfo is one resource a check reads, described.
	InputInfo = check.InputInfo
	// RuleInfo describes one rule of a check.
	RuleInfo = check.RuleInfo
	// CaseRef names a library case.
	CaseRef = check.CaseRef
)

// Case-link constructors, for the founding checks of this package: see
// check.Prevents.
var (
	Prevents = check.Prevents
	Detects  = check.Detects
	Related  = check.Related
	Cite     = check.Cite
	Graded   = check.Graded
)

// ErrNotEvaluated marks a check that could not answer.
var ErrNotEvaluated = check.ErrNotEvaluated

// Needs lists required inputs.
func Needs(rs ...snapshot.Resource) []Input { return check.Needs(rs...) }

// Optional marks an input as optional.
func Optional(r snapshot.Resource) Input { return check.Optional(r) }

// NotEvaluated returns ErrNotEvaluated with a reason.
func NotEvaluated(format string, args ...any) error { return check.NotEvaluated(format, args...) }

// RulesOf returns c's rules, or its one implicit rule.
func RulesOf(c Check) []Rule { return check.RulesOf(c) }

// Describe returns c's Info.
func Describe(c Check, caseTitle func(id string) string) Info { return check.Describe(c, caseTitle) }
