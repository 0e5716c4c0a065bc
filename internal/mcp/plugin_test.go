package mcp

import (
	"encoding/json"
	"image"
	_ "image/png" // the plugin icon
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
		License     string            `json:"license"`
		Icon        string            `json:"icon"`
		MCPServers  map[string]server `json:"mcpServers"`
		Interface   *struct {
			DisplayName      string `json:"displayName"`
			ShortDescription string `json:"shortDescription"`
			Logo             string `json:"logo"`
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
	// Both name the licence of LICENSE, and the same icon: a square PNG of
	// 512 to 2048 pixels, as the Claude Code plugin directory asks.
	lic, err := os.ReadFile(filepath.Join("../..", "LICENSE"))
	if err != nil || !strings.Contains(string(lic), "Apache License\n                           Version 2.0, January 2004") {
		t.Errorf("LICENSE is not the Apache License 2.0: %v", err)
	}
	if codex.License != "Apache-2.0" || claude.License != "Apache-2.0" {
		t.Errorf("license: codex %q, claude %q, want Apache-2.0", codex.License, claude.License)
	}
	if codex.Interface == nil || claude.Icon == "" || codex.Interface.Logo != claude.Icon {
		t.Fatalf("icon: claude %q, codex logo %+v", claude.Icon, codex.Interface)
	}
	f, err := os.Open(filepath.Join("../..", claude.Icon))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(f)
	if err != nil || format != "png" || cfg.Width != cfg.Height || cfg.Width < 512 || cfg.Width > 2048 {
		t.Errorf("icon %s: %s %dx%d %v, want a square PNG of 512 to 2048 px", claude.Icon, format, cfg.Width, cfg.Height, err)
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
