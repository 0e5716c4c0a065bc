// Package cli holds kubegap's commands: one file per command, each with a
// newXCommand(app) constructor, wired together in NewRootCommand. Commands
// print results to App.Out and progress and errors to App.ErrOut.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Exit codes (contract): 0 no finding at or above --fail-on, 1 at least one,
// 2 the command could not run, 130 interrupted (Ctrl-C), as shells report
// a process ended by SIGINT.
const (
	ExitOK          = 0
	ExitFindings    = 1
	ExitError       = 2
	ExitInterrupted = 130
)

// App carries what every command needs. Tests build one over buffers.
type App struct {
	Out    io.Writer
	ErrOut io.Writer
	// Getenv reads the environment (NO_COLOR, KUBECONFIG); os.Getenv by default.
	Getenv func(string) string
	// OutIsTerminal and ErrIsTerminal say whether colour and progress may be shown.
	OutIsTerminal bool
	ErrIsTerminal bool
	// OutWidth is the terminal's width when Out is one; 0 otherwise.
	OutWidth int
	// Now is the clock reports are stamped with; time.Now by default.
	Now func() time.Time
	// In is standard input, for --from -.
	In io.Reader
	// Name is how the program was invoked: "kubectl-gap" makes it a kubectl
	// plugin, and its help says "kubectl gap".
	Name string
}

// NewApp returns an App over the process's standard streams.
func NewApp() *App {
	app := &App{
		Out:           os.Stdout,
		ErrOut:        os.Stderr,
		In:            os.Stdin,
		Getenv:        os.Getenv,
		OutIsTerminal: term.IsTerminal(int(os.Stdout.Fd())),
		ErrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		Now:           time.Now,
		Name:          filepath.Base(os.Args[0]),
	}
	if app.OutIsTerminal {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
			app.OutWidth = w
		}
	}
	return app
}

// exitError ends a command with a given exit code. A nil Err prints nothing.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withCode marks err as ending the command with code.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// NewRootCommand builds the kubegap command tree.
func NewRootCommand(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubegap",
		Short: "Audit Kubernetes clusters, read-only, for the gaps behind public incidents",
		Long: `kubegap reads a cluster (or files dumped from one) without writing anything,
and reports the gaps that public incidents show are dangerous. Every finding
names the objects, the evidence, the fix and the incidents behind it. Only
'kubegap publish', a separate explicit step, writes: its report objects
(PolicyReport or OpenReports), nothing else.

Its incident library is browsable with 'kubegap cases'.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if isKubectlPlugin(app.Name) {
		// cobra names commands by the first word of Use; the display name
		// makes help and usage say "kubectl gap audit".
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl gap"}
	}
	root.SetOut(app.Out)
	root.SetErr(app.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withCode(ExitError, err) })
	root.AddCommand(
		newAuditCommand(app),
		newSnapshotCommand(app),
		newChecksCommand(app),
		newVersionCommand(app),
		newCasesCommand(app),
		newImageCommand(app),
		newMCPCommand(app),
		newRecipeCommand(app),
		newRBACCommand(app),
		newPublishCommand(app),
		newServeCommand(app),
		newSiteCommand(app),
		newExporterCommand(app),
	)
	return root
}

// Run runs kubegap with args and returns the exit code. Errors are printed
// once, here, as a single line.
func Run(ctx context.Context, app *App, args []string) int {
	defer startProfiles(app)()
	app.defaults()
	silenceKlog()
	root := NewRootCommand(app)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil {
		// Ctrl-C or SIGTERM: whatever the command was doing failed because
		// it was cancelled; saying so beats "context canceled".
		fmt.Fprintln(app.ErrOut, "kubegap: interrupted")
		return ExitInterrupted
	}
	code := ExitError
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		err = ee.err
	}
	if err != nil {
		fmt.Fprintln(app.ErrOut, "kubegap: "+oneLine(err.Error()))
	}
	return code
}

// Main runs kubegap as a process: it cancels on SIGINT or SIGTERM.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, NewApp(), os.Args[1:])
}

// oneLine folds an error onto one line: the contract is one clear line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// defaults fills what a test's App leaves empty.
func (app *App) defaults() {
	if app.Getenv == nil {
		app.Getenv = func(string) string { return "" }
	}
	if app.Now == nil {
		app.Now = time.Now
	}
	if app.In == nil {
		app.In = strings.NewReader("")
	}
}

// isKubectlPlugin reports whether the binary runs as kubectl's "gap"
// plugin: kubectl runs kubectl-gap for "kubectl gap".
func isKubectlPlugin(name string) bool {
	name = strings.TrimSuffix(name, ".exe")
	return name == "kubectl-gap"
}
