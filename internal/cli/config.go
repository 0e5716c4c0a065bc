package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/config"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
	"github.com/kubegap/kubegap/internal/suppress"
)

// applyConfig reads the config file and takes from it every setting whose
// flag was not given: flags win.
func applyConfig(cmd *cobra.Command, app *App, fl *auditFlags) error {
	dir, err := os.Getwd()
	if err != nil {
		dir = ""
	}
	path, err := config.Find(fl.config, dir, app.Getenv)
	if err != nil {
		return err
	}
	cfg, err := config.Load(path)
	if err != nil {
		return fmt.Errorf("config %w", err)
	}
	fl.cfg = cfg
	// The selection the flags alone make, to name what the file skipped.
	fl.flagChecks, fl.flagSkipChecks = fl.checks, fl.skipChecks
	fl.cfgSettings = nil
	set := func(flag string, dst *string, v string) {
		if v != "" && !cmd.Flags().Changed(flag) {
			*dst = v
			fl.cfgSettings = append(fl.cfgSettings, flag)
		}
	}
	set("output", &fl.output, cfg.Output)
	set("fail-on", &fl.failOn, cfg.FailOn)
	set("min-severity", &fl.minSeverity, cfg.MinSeverity)
	if cfg.IgnoreProviderOwned != nil && !cmd.Flags().Changed("ignore-provider-owned") {
		fl.ignoreProviderOwned = *cfg.IgnoreProviderOwned
	}
	if len(cfg.Checks) > 0 && !cmd.Flags().Changed("checks") {
		fl.checks = cfg.Checks
		fl.cfgSettings = append(fl.cfgSettings, "checks")
	}
	if len(cfg.SkipChecks) > 0 && !cmd.Flags().Changed("skip-checks") {
		fl.skipChecks = cfg.SkipChecks
		fl.cfgSettings = append(fl.cfgSettings, "skip-checks")
	}
	return resolveCaseURL(cmd, app, fl)
}

// configUse says what the config file did to this run: the settings it
// gave, the checks that would have run without it, and how many findings
// its suppressions took out. nil without a config file.
func configUse(fl auditFlags, selected []check.Check, target *check.KubeVersion, rep *report.Report) *snapshot.ConfigUse {
	if fl.cfg == nil || fl.cfg.Path == "" {
		return nil
	}
	use := &snapshot.ConfigUse{Path: fl.cfg.Path, Settings: fl.cfgSettings, Suppressions: len(fl.cfg.Suppressions)}
	// Relative to the working directory, as the user would type it
	// (".kubegap.yaml", "../../.kubegap.yaml").
	if cwd, err := os.Getwd(); err == nil && filepath.IsAbs(use.Path) {
		if rel, err := filepath.Rel(cwd, use.Path); err == nil {
			use.Path = rel
		}
	}
	if slices.Contains(fl.cfgSettings, "checks") || slices.Contains(fl.cfgSettings, "skip-checks") {
		if without, err := audit.Choose(checks.All(), fl.flagChecks, fl.flagSkipChecks, target); err == nil {
			ran := map[string]bool{}
			for _, c := range selected {
				ran[c.ID] = true
			}
			for _, c := range without {
				if !ran[c.ID] {
					use.SkippedChecks = append(use.SkippedChecks, c.ID)
				}
			}
		}
	}
	for _, s := range rep.Suppressed {
		if s.By == "config" {
			use.Suppressed++
		}
	}
	return use
}

func compileSuppressions(cfg *config.File) ([]suppress.Rule, error) {
	if cfg == nil {
		return nil, nil
	}
	rules := append([]suppress.Rule(nil), cfg.Suppressions...)
	known := func(id string) bool { _, ok := checks.Lookup(id); return ok }
	for i := range rules {
		if err := rules[i].Compile(known); err != nil {
			return nil, fmt.Errorf("config %s: suppressions[%d]: %w", cfg.Path, i, err)
		}
	}
	return rules, nil
}

// colorMode decides colour for --color: always and never are what they
// say; auto colours a terminal unless NO_COLOR is set, and FORCE_COLOR
// (as CI systems set it) colours anything.
func colorMode(app *App, mode string) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		if app.Getenv("NO_COLOR") != "" {
			return false, nil
		}
		if v := app.Getenv("FORCE_COLOR"); v != "" && v != "0" && v != "false" {
			return true, nil
		}
		return app.OutIsTerminal, nil
	}
	return false, fmt.Errorf("--color: unknown mode %q (want auto, always or never)", mode)
}

// width is the column count text output wraps at: COLUMNS when set, else
// the terminal's width, else 80 (a file, a pipe, a CI log).
func (app *App) width() int {
	if app.Getenv == nil {
		app.defaults()
	}
	if n, err := strconv.Atoi(app.Getenv("COLUMNS")); err == nil && n >= 20 {
		return n
	}
	if app.OutIsTerminal && app.OutWidth >= 20 {
		return app.OutWidth
	}
	return 80
}
