// Package checks holds kubegap's checks: one file per check, each a
// constructor returning a Check, listed once in registry.go. A check reads
// the snapshot and returns findings; it never talks to a cluster.
package checks

import (
	"errors"
	"fmt"

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
	// Cases are the incident library case IDs the check cites.
	Cases []string
	// Run looks for the gap. It returns ErrNotEvaluated (wrapped with the
	// reason) when the snapshot cannot answer the question.
	Run func(*Context) ([]finding.Finding, error)
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
	// Err is why the image could not be inspected, if it could not.
	Err string `json:"error,omitempty"`
}

// ErrNotEvaluated marks a check that could not answer. Wrap it with the
// reason: fmt.Errorf("%w: no node reports its OS", ErrNotEvaluated).
var ErrNotEvaluated = errors.New("not evaluated")

// NotEvaluated returns ErrNotEvaluated with a reason.
func NotEvaluated(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotEvaluated, fmt.Sprintf(format, args...))
}
