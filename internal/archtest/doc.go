// Package archtest holds only a test: it enforces the import rules of
// DESIGN.md so the package boundaries cannot erode silently.
package archtest
