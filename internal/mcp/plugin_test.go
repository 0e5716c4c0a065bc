package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestAgentPluginManifests keeps the Codex plugin (.codex-plugin) and the
// Claude Code plugin (.claude-plugin) describing the same thing: the same
// name and version, the skill that exists, and `kubegap mcp` as the server.
func TestAgentPluginManifests(t *testing.T) {
	type server struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	type manifest struct {
		Name        string            `json:"name"`
		Version     string            `json:"version"`
		Description string            `json:"description"`
		Skills      string            `json:"skills"`
		MCPServers  map[string]server `json:"mcpServers"`
		Interface   *struct {
			DisplayName      string `json:"displayName"`
			ShortDescription string `json:"shortDescription"`
		} `json:"interface"`
	}
	read := func(path string) manifest {
		b, err := os.ReadFile(filepath.Join("../..", path))
		if err != nil {
			t.Fatal(err)
		}
		var m manifest
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return m
	}
	codex, claude := read(".codex-plugin/plugin.json"), read(".claude-plugin/plugin.json")
	if codex.Name != "kubegap" || codex.Name != claude.Name || codex.Version != claude.Version || codex.Description == "" {
		t.Errorf("codex %s %s, claude %s %s", codex.Name, codex.Version, claude.Name, claude.Version)
	}
	want := map[string]server{"kubegap": {Command: "kubegap", Args: []string{"mcp"}}}
	if !reflect.DeepEqual(codex.MCPServers, want) || !reflect.DeepEqual(claude.MCPServers, want) {
		t.Errorf("mcpServers: codex %v, claude %v", codex.MCPServers, claude.MCPServers)
	}
	if codex.Interface == nil || codex.Interface.DisplayName == "" || codex.Interface.ShortDescription == "" {
		t.Error("the Codex manifest has no interface block")
	}
	// Codex reads skills as SKILL.md files with a name and a description.
	skill, err := os.ReadFile(filepath.Join("../..", codex.Skills, "kubegap", "SKILL.md"))
	if err != nil {
		t.Fatalf("skills %q: %v", codex.Skills, err)
	}
	front, _, ok := strings.Cut(strings.TrimPrefix(string(skill), "---\n"), "\n---\n")
	if !ok || !strings.Contains(front, "name: kubegap\n") || !strings.Contains(front, "description: ") {
		t.Errorf("SKILL.md front matter: %q", front)
	}
}
