// Command scalefill fills a running cluster with jobs for the 100,000-job
// benchmark (bench/scale100k.sh): n submissions made exactly as the sbatch
// command makes them (the same option parsing, #SBATCH and environment
// handling, one job spec per submission carrying this process's
// environment), from p workers that each keep one connection, so that the
// fill is bound by the controller and not by starting 100,000 processes.
// It prints the submission rate of every block of submissions.
//
// Usage: scalefill -n 96000 -p 4 -block 2000 -- -H -J scale -o /dev/null --wrap=true
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-hpc/drover/internal/app/commands"
	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/sbatch"
)

func main() {
	n := flag.Int("n", 1000, "submissions")
	p := flag.Int("p", 4, "concurrent submitters")
	block := flag.Int("block", 2000, "print the rate of every block of this many submissions")
	limit := flag.Duration("limit", 15*time.Minute, "give up after this long")
	flag.Parse()
	args := flag.Args()
	ctx, cancel := context.WithTimeout(context.Background(), *limit)
	defer cancel()

	var next, failed atomic.Int64
	var mu sync.Mutex
	done, blockStart := 0, time.Now()
	t0 := blockStart
	errOut := &onceWriter{w: os.Stderr}
	var wg sync.WaitGroup
	for w := 0; w < *p; w++ {
		c, err := commands.Dial()
		if err != nil {
			fmt.Fprintf(os.Stderr, "scalefill: dial: %v\n", err)
			os.Exit(1)
		}
		env := cli.NewOSEnv("sbatch", "bench", func() (cli.Client, error) { return c, nil })
		env.Stdout, env.Stderr = io.Discard, errOut
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			for next.Add(1) <= int64(*n) && ctx.Err() == nil {
				if sbatch.Run(ctx, env, args) != 0 {
					failed.Add(1)
				}
				mu.Lock()
				done++
				if done%*block == 0 {
					now := time.Now()
					fmt.Printf("fill: %6.0f /s for submissions %d-%d\n",
						float64(*block)/now.Sub(blockStart).Seconds(), done-*block+1, done)
					blockStart = now
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0)
	fmt.Printf("fill: %d submissions in %.1f s = %.0f /s with %d submitters; failed %d\n",
		done, el.Seconds(), float64(done)/el.Seconds(), *p, failed.Load())
	if ctx.Err() != nil {
		fmt.Fprintf(os.Stderr, "scalefill: stopped after %v at %d submissions\n", *limit, done)
		os.Exit(1)
	}
	if failed.Load() > 0 {
		os.Exit(1)
	}
}

// onceWriter passes on the first error message only: 100,000 copies of
// one refusal say nothing more than one.
type onceWriter struct {
	mu   sync.Mutex
	done bool
	w    io.Writer
}

func (o *onceWriter) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.done {
		o.done = true
		_, _ = o.w.Write(b)
	}
	return len(b), nil
}
