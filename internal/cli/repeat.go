package cli

import (
	"context"
	"fmt"
	"time"
)

// DateLineFormat is the date line squeue and sinfo print above a table
// (-l, -i, -v): "Sun Nov 22 05:10:05 2026".
const DateLineFormat = "Mon Jan 02 15:04:05 2006"

// Repeat runs print once, or every iterate seconds until ctx ends (squeue
// and sinfo -i), with the date line before each table when dateLine is set.
func Repeat(ctx context.Context, env *Env, iterate int, dateLine bool, print func() error) error {
	for {
		if dateLine {
			fmt.Fprintln(env.Stdout, env.Now().Format(DateLineFormat))
		}
		if err := print(); err != nil {
			return err
		}
		if iterate <= 0 {
			return nil
		}
		fmt.Fprintln(env.Stdout)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Duration(iterate) * time.Second):
		}
	}
}
