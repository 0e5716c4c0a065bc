// Package mcp serves kubegap to coding agents (Claude Code, Codex) as a
// Model Context Protocol server over stdio. Every tool only reads: audit a
// cluster, files or the demo cluster; page through the findings; open one
// finding in full; list and explain checks; search and open incident cases;
// and, only when the server was started with registry access allowed,
// inspect an image.
//
// The tools are thin: they call the same packages the CLI does (audit,
// checks, library, cluster, images) and shape the results so an agent gets
// stable IDs and small pages. Bad input from an agent is a tool error that
// says what was wrong and what is valid; it never ends the session.
package mcp
