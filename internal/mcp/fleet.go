package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Several contexts in one audit call: each is audited as a call with that
// context would be and kept as its own audit, so that get_finding,
// explain_check and paging work on it by its audit_id.
const (
	// maxFleetContexts is how many contexts one call may name: the server
	// keeps the last defaultKeepAudits audits, and a call must not evict
	// its own.
	maxFleetContexts = defaultKeepAudits
	// fleetConcurrency is how many clusters are read at once, as the CLI's
	// --max-concurrent-contexts default.
	fleetConcurrency = 4
)

// ContextAudit is how one context of a several-context audit went.
type ContextAudit struct {
	Context       string         `json:"context"`
	AuditID       string         `json:"audit_id,omitempty" jsonschema:"the context's audit, for paging its findings (audit with audit_id), get_finding and explain_check; absent when it could not be audited"`
	ServerVersion string         `json:"server_version,omitempty"`
	Summary       report.Summary `json:"summary" jsonschema:"the context's findings by severity"`
	Failed        int            `json:"failed,omitempty" jsonschema:"checks with findings"`
	Incomplete    int            `json:"incomplete,omitempty" jsonschema:"checks partial or not evaluated: input unread or incomplete, so silence proves nothing there"`
	ReadErrors    int            `json:"read_errors,omitempty" jsonschema:"resources the audit needed but could not read (forbidden or error)"`
	Error         string         `json:"error,omitempty" jsonschema:"why the context could not be audited (unreachable, refused, not in the kubeconfig); the other contexts are still audited"`
}

// auditContexts runs one audit per context, a few at a time. Every context
// is checked against --allow-context and the kubeconfig before any is
// read: a refused name refuses the whole call.
func (h *handlers) auditContexts(ctx context.Context, req *sdk.CallToolRequest, in AuditInput) (*sdk.CallToolResult, AuditOutput, error) {
	switch {
	case in.Context != "":
		return nil, AuditOutput{}, errors.New("context and contexts cannot be combined: list every context in contexts")
	case in.Demo || len(in.Files) > 0:
		return nil, AuditOutput{}, errors.New("contexts audits live clusters: drop files/demo, or drop contexts")
	case in.AuditID != "" || in.Page > 1:
		return nil, AuditOutput{}, errors.New("contexts runs new audits: page each context's findings with its audit_id instead")
	}
	var names []string
	for _, n := range in.Contexts {
		if strings.TrimSpace(n) == "" {
			return nil, AuditOutput{}, errors.New("contexts: an empty context name")
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) > maxFleetContexts {
		return nil, AuditOutput{}, fmt.Errorf("contexts: %d contexts, at most %d per call (the server keeps the last %d audits): split them over several calls", len(names), maxFleetContexts, defaultKeepAudits)
	}
	for _, n := range names {
		if err := h.allowContext(n); err != nil {
			return nil, AuditOutput{}, err
		}
	}
	minSev, pageSize, err := pagingArgs(in)
	if err != nil {
		return nil, AuditOutput{}, err
	}
	results := make([]ContextAudit, len(names))
	sem := make(chan struct{}, fleetConcurrency)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			one := in
			one.Contexts, one.Context = nil, name
			results[i] = ContextAudit{Context: name}
			rep, err := h.runAudit(ctx, one)
			if err != nil {
				results[i].Error = strings.TrimPrefix(err.Error(), fmt.Sprintf("context %q: ", name))
				return
			}
			results[i].AuditID = h.audits.add(rep).id
			results[i].ServerVersion = rep.Source.ServerVersion
			results[i].Summary = rep.Summary
			for _, c := range rep.Checks {
				switch c.Status {
				case report.Fail:
					results[i].Failed++
				case report.Partial, report.NotEvaluated:
					results[i].Incomplete++
				}
			}
			for _, c := range rep.Coverage {
				if c.Status == snapshot.StatusError || c.Status == snapshot.StatusForbidden {
					results[i].ReadErrors++
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, AuditOutput{}, err
	}
	out := AuditOutput{
		Source:      snapshot.Source{Type: snapshot.SourceCluster},
		Contexts:    results,
		Findings:    []FindingBrief{},
		MinSeverity: minSev.String(),
		Page:        1,
		PageSize:    pageSize,
		Hint:        "each audited context has its own audit_id: call audit with that audit_id (and page) for its findings, get_finding and explain_check for details",
	}
	var text strings.Builder
	fmt.Fprintf(&text, "%d contexts:\n", len(results))
	for _, r := range results {
		s := r.Summary
		out.Summary.Add(s)
		if r.Error != "" {
			fmt.Fprintf(&text, "- %s: could not audit: %s\n", r.Context, r.Error)
			continue
		}
		fmt.Fprintf(&text, "- %s (%s, audit_id %s): %d critical, %d high, %d medium, %d low, %d info; %d checks failed, %d incomplete, %d resources unreadable\n",
			r.Context, r.ServerVersion, r.AuditID, s.Critical, s.High, s.Medium, s.Low, s.Info, r.Failed, r.Incomplete, r.ReadErrors)
	}
	text.WriteString(out.Hint + "\n")
	return textResult(req, text.String()), out, nil
}
