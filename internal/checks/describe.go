package checks

// Info describes a check for people and agents: what `kubegap checks -o
// json` prints and the MCP tools return.
type Info struct {
	ID          string      `json:"id"`
	Title       string      `json:"title"`
	Severity    string      `json:"severity" jsonschema:"the highest severity the check reports"`
	Description string      `json:"description,omitempty"`
	Reads       []InputInfo `json:"reads" jsonschema:"resources the check lists; a required one that cannot be read makes it not-evaluated"`
	Cases       []CaseRef   `json:"cases"`
}

// InputInfo is one resource a check reads.
type InputInfo struct {
	Resource string `json:"resource"`
	Optional bool   `json:"optional,omitempty"`
}

// CaseRef names a library case, with its title when known.
type CaseRef struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
}

// Describe returns c's Info. caseTitle looks up case titles (nil: IDs only).
func Describe(c Check, caseTitle func(id string) string) Info {
	info := Info{ID: c.ID, Title: c.Title, Severity: c.Severity.String(), Description: c.Description,
		Reads: make([]InputInfo, 0, len(c.Reads)), Cases: make([]CaseRef, 0, len(c.Cases))}
	for _, in := range c.Reads {
		info.Reads = append(info.Reads, InputInfo{Resource: in.Resource.String(), Optional: in.Optional})
	}
	for _, id := range c.Cases {
		ref := CaseRef{ID: id}
		if caseTitle != nil {
			ref.Title = caseTitle(id)
		}
		info.Cases = append(info.Cases, ref)
	}
	return info
}
