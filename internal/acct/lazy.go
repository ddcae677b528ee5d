package acct

import (
	"context"
	"fmt"
	"sync"
)

// Lazy returns a Store that opens the real one on first use and, while
// opening fails, answers every call with an error wrapping ErrUnavailable.
// The controller must start and schedule while its database is down: the
// outbox keeps the records until a later call succeeds in opening it.
func Lazy(open func(context.Context) (Store, error)) Store {
	return &lazy{open: open}
}

type lazy struct {
	open func(context.Context) (Store, error)
	mu   sync.Mutex
	st   Store
}

func (l *lazy) get(ctx context.Context) (Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st != nil {
		return l.st, nil
	}
	st, err := l.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	l.st = st
	return st, nil
}

func (l *lazy) PutJobs(ctx context.Context, jobs []*Job) error {
	st, err := l.get(ctx)
	if err != nil {
		return err
	}
	return st.PutJobs(ctx, jobs)
}

func (l *lazy) Jobs(ctx context.Context, q Query) ([]*Job, error) {
	st, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return st.Jobs(ctx, q)
}

func (l *lazy) Ping(ctx context.Context) error {
	st, err := l.get(ctx)
	if err != nil {
		return err
	}
	return st.Ping(ctx)
}

func (l *lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st == nil {
		return nil
	}
	return l.st.Close()
}
