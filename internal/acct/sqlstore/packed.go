package sqlstore

import (
	"database/sql"
	"fmt"
	"strings"
)

// SQLite reads rows packed into one text value.
//
// modernc.org/sqlite opens every connection SQLITE_OPEN_FULLMUTEX, so each
// column a row hands to database/sql costs a type call and a value call,
// each taking and releasing the connection's mutex. Over forty columns that
// is most of the time of a large query (sacct over a month). One concat()
// inside SQLite instead builds the whole row as a single text, which Go
// splits again: integers as "123,", texts length-prefixed as "5:hello"
// (the length in bytes, so no character needs escaping), on a second
// goroutine while SQLite steps on. Reading 100,000 whole records (sacct
// -X over them) went from 650 to 350 ms.

// packedExpr is the select list of one SQLite expression yielding a row of
// cols (prefixed with p) packed. concat() takes up to 1,000 arguments
// (SQLITE_MAX_FUNCTION_ARG) and is several times cheaper than printf().
func packedExpr[T any](cols []column[T], p string) string {
	args := make([]string, 0, 3*len(cols))
	for _, c := range cols {
		if c.kind == kInt {
			args = append(args, p+c.name, "','")
		} else {
			args = append(args, "octet_length("+p+c.name+")", "':'", p+c.name)
		}
	}
	return "concat(" + strings.Join(args, ", ") + ")"
}

// selectList is what a query of cols selects: the columns, or their
// packed expression where the dialect packs rows.
func selectList[T any](d *dialect, cols []column[T], p string) string {
	if d.packRows {
		return packedExpr(cols, p)
	}
	return colNames(cols, p)
}

// unpack reads a row packed by packedExpr into r. Texts are substrings of
// row (which they keep alive; a row is a few hundred bytes).
func (s *scanner[T]) unpack(row string, r *T) error {
	rest := row
	for _, c := range s.cols {
		if c.kind == kInt {
			v, tail, ok := cutInt(rest, ',')
			if !ok {
				return fmt.Errorf("packed row: bad value of %s in %.80q", c.name, row)
			}
			c.set(r, v)
			rest = tail
			continue
		}
		n, tail, ok := cutInt(rest, ':')
		if !ok || n < 0 || n > int64(len(tail)) {
			return fmt.Errorf("packed row: bad length of %s in %.80q", c.name, row)
		}
		c.setText(r, tail[:n])
		rest = tail[n:]
	}
	if rest != "" {
		return fmt.Errorf("packed row: %d bytes left over", len(rest))
	}
	return nil
}

// cutInt parses the decimal integer s starts with, up to sep, and returns
// what follows sep. (SQLite writes integers as [-]digits, which
// strconv.ParseInt would check more slowly.)
func cutInt(s string, sep byte) (v int64, rest string, ok bool) {
	i := 0
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		i = 1
	}
	start := i
	for ; i < len(s) && s[i] != sep; i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, "", false
		}
		v = v*10 + int64(d)
	}
	if i == start || i == len(s) || i-start > 19 {
		return 0, "", false
	}
	if neg {
		v = -v
	}
	return v, s[i+1:], true
}

// packedBatch is how many packed rows go from the reading goroutine to
// the unpacking one at a time.
const packedBatch = 256

// readPacked is readRows for packed rows: one goroutine steps SQLite
// while the caller's unpacks and allocates the records, which overlaps
// the two halves of a large read.
func readPacked[T any](rows *sql.Rows, sc *scanner[T], each func(*T)) error {
	batches := make(chan []string, 8)
	done := make(chan error, 1)
	go func() {
		defer close(batches)
		defer rows.Close()
		b := make([]string, 0, packedBatch)
		for rows.Next() {
			var row string
			if err := rows.Scan(&row); err != nil {
				done <- err
				return
			}
			if b = append(b, row); len(b) == packedBatch {
				batches <- b
				b = make([]string, 0, packedBatch)
			}
		}
		if len(b) > 0 {
			batches <- b
		}
		done <- rows.Err()
	}()
	var err error
	for b := range batches {
		for _, row := range b {
			if err != nil {
				break // drain: the reader stops at the end of the rows
			}
			r := new(T)
			if err = sc.unpack(row, r); err == nil {
				each(r)
			}
		}
	}
	if e := <-done; err == nil {
		err = e
	}
	return err
}
