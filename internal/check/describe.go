package check

// Info describes a check for people and agents: what `kubegap checks -o
// json` prints and the MCP tools return.
type Info struct {
	ID          string      `json:"id"`
	Title       string      `json:"title"`
	Severity    string      `json:"severity" jsonschema:"the highest severity the check reports"`
	Description string      `json:"description,omitempty"`
	Reads       []InputInfo `json:"reads" jsonschema:"resources the check lists"`
	Rules       []RuleInfo  `json:"rules" jsonschema:"the questions the check answers; each passes only when the resources it needs were read completely"`
	Cases       []CaseRef   `json:"cases"`
}

// RuleInfo describes one rule of a check.
type RuleInfo struct {
	ID      string   `json:"id"`
	Summary string   `json:"summary,omitempty"`
	Needs   []string `json:"needs"`
}

// InputInfo is one resource a check reads.
type InputInfo struct {
	Resource string `json:"resource"`
	Optional bool   `json:"optional,omitempty"`
}

// CaseRef names a library case, with its title when known and, where a
// check cites it, how the check relates to it.
type CaseRef struct {
	ID       string   `json:"id"`
	Title    string   `json:"title,omitempty"`
	Relation Relation `json:"relation,omitempty" jsonschema:"what the check does for the incident: prevents (flags the gap before it), detects (flags it while under way), related (same mechanism, other trigger)"`
}

// Phrase says in words how the citing check relates to the case: "this is
// the gap behind <title>", "symptoms match <title>", "same mechanism as
// <title>"; the bare title (or ID) without a relation.
func (r CaseRef) Phrase() string {
	name := r.Title
	if name == "" {
		name = r.ID
	}
	if r.Relation == "" {
		return name
	}
	return r.Relation.Phrase() + " " + name
}

// Describe returns c's Info. caseTitle looks up case titles (nil: IDs only).
func Describe(c Check, caseTitle func(id string) string) Info {
	info := Info{ID: c.ID, Title: c.Title, Severity: c.Severity.String(), Description: c.Description,
		Reads: make([]InputInfo, 0, len(c.Reads)), Cases: make([]CaseRef, 0, len(c.Cases))}
	for _, in := range c.Reads {
		info.Reads = append(info.Reads, InputInfo{Resource: in.Resource.String(), Optional: in.Optional})
	}
	for _, r := range RulesOf(c) {
		ri := RuleInfo{ID: r.ID, Summary: r.Summary, Needs: []string{}}
		for _, n := range r.Needs {
			ri.Needs = append(ri.Needs, n.String())
		}
		info.Rules = append(info.Rules, ri)
	}
	for _, l := range c.Cases {
		ref := CaseRef{ID: l.ID, Relation: l.Relation}
		if caseTitle != nil {
			ref.Title = caseTitle(l.ID)
		}
		info.Cases = append(info.Cases, ref)
	}
	return info
}
