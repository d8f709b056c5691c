// subject-access-verify checks a saved subject access answer of case-read-service (the JSON of
// GET /subject-access-request, or of `case-read subject-access`) with Go's reference
// implementation of signed notes and transparency-log trees alone: golang.org/x/mod/sumdb/note
// and golang.org/x/mod/sumdb/tlog, the standard library otherwise.
//
//	go run main.go ANSWER.json VKEY_FILE
//
// VKEY_FILE holds the audit log's verifier key, the line `case-read audit vkey` prints.
//
// The answer carries each disclosure's leaf index and entry (the audit record's exact bytes),
// and one proof of them all: the log's signed checkpoint (a C2SP tlog-checkpoint note) and the
// tree's stored hashes that tlog.ProveRecord reads to prove every disclosure's index in the
// checkpoint's tree, each once, in ascending stored index (tlog.StoredHashIndex), end to end.
// So the check is:
//
//  1. the checkpoint opens with the key (note.Open), and its body says the origin (the key's
//     name), the tree's size and its root;
//  2. the disclosures' indexes are ascending, each once, inside the tree;
//  3. tlog.ProveRecord, run for every index over a HashReader that records what it is asked,
//     asks for exactly as many stored hashes, all told, as the proof holds;
//  4. each disclosure, in order: tlog.ProveRecord over those hashes (by stored index), then
//     tlog.CheckRecord of the proof against the signed root for tlog.RecordHash(entry).
//
// Exit 0 printing how many disclosures were proved; exit 1 naming the first disclosure not
// proved (its position, index and requestId) or what else is wrong; exit 2 for bad usage.
//
// It compiles in GOPATH mode against Debian's golang-golang-x-mod-dev:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run main.go ANSWER.json VKEY_FILE
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// disclosure is what the check reads of one disclosure: the answer's other fields (time,
// operation, recipient, ...) are the entry's, shown; `case-read subject-access verify` checks
// them against it.
type disclosure struct {
	RequestID string `json:"requestId"`
	Index     *int64 `json:"index"`
	Entry     []byte `json:"entry"` // base64 in the JSON, decoded by encoding/json
}

type answer struct {
	Content *struct {
		Crn         string       `json:"crn"`
		Disclosures []disclosure `json:"disclosures"`
		Proof       *struct {
			Checkpoint string `json:"checkpoint"`
			Hashes     []byte `json:"hashes"` // 32-byte hashes end to end, base64 in the JSON
		} `json:"proof"`
	} `json:"content"`
}

// failure ends the program: exit 1, the reason on stderr.
func failure(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "subject-access-verify: "+format+"\n", args...)
	os.Exit(1)
}

// readAnswer decodes the answer file as one JSON value, read through a buffer.
func readAnswer(path string) (*answer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	var a answer
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("not JSON, or not an answer's: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	if a.Content == nil {
		return nil, errors.New(`no "content" object`)
	}
	for i, d := range a.Content.Disclosures {
		if d.Index == nil || *d.Index < 0 {
			return nil, fmt.Errorf("disclosure %d has no index (a whole number)", i+1)
		}
		if d.Entry == nil {
			return nil, fmt.Errorf("disclosure %d has no entry", i+1)
		}
	}
	return &a, nil
}

// openCheckpoint opens the signed checkpoint note with the log's key and reads its body:
// origin, size, root (C2SP tlog-checkpoint; tlog.ParseTree reads the Go checksum database's
// own form, so the three lines are read here).
func openCheckpoint(v note.Verifier, msg string) (tlog.Tree, error) {
	n, err := note.Open([]byte(msg), note.VerifierList(v))
	if err != nil {
		return tlog.Tree{}, fmt.Errorf("its signature by %s does not verify: %v", v.Name(), err)
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 {
		return tlog.Tree{}, errors.New("its body has fewer than three lines")
	}
	if lines[0] != v.Name() {
		return tlog.Tree{}, fmt.Errorf("it is of the log %q, not %q", lines[0], v.Name())
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 1 || strconv.FormatInt(size, 10) != lines[1] {
		return tlog.Tree{}, fmt.Errorf("its size line %q is not a tree size", lines[1])
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		return tlog.Tree{}, fmt.Errorf("its root line %q is not a hash", lines[2])
	}
	return tlog.Tree{N: size, Hash: root}, nil
}

// recorder is a HashReader that answers zero hashes and records the stored indexes asked for.
type recorder map[int64]bool

func (r recorder) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	for _, i := range indexes {
		r[i] = true
	}
	return make([]tlog.Hash, len(indexes)), nil
}

// stored is a HashReader over the proof's hashes, by stored index.
type stored map[int64]tlog.Hash

func (s stored) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for k, i := range indexes {
		h, ok := s[i]
		if !ok {
			return nil, fmt.Errorf("stored hash %d is not in the proof", i)
		}
		out[k] = h
	}
	return out, nil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: subject-access-verify ANSWER.json VKEY_FILE")
		os.Exit(2)
	}
	vkey, err := os.ReadFile(os.Args[2])
	if err != nil {
		failure("the verifier key: %v", err)
	}
	v, err := note.NewVerifier(strings.TrimSpace(string(vkey)))
	if err != nil {
		failure("the verifier key in %s: %v", os.Args[2], err)
	}
	a, err := readAnswer(os.Args[1])
	if err != nil {
		failure("%s is not a subject access answer: %v", os.Args[1], err)
	}
	disclosures := a.Content.Disclosures
	proof := a.Content.Proof
	if len(disclosures) == 0 {
		if proof != nil {
			failure("the answer has a proof and no disclosure")
		}
		fmt.Printf("the answer for %s lists no disclosures: nothing to prove\n", a.Content.Crn)
		return
	}
	if proof == nil {
		failure("the answer has disclosures and no proof")
	}
	tree, err := openCheckpoint(v, proof.Checkpoint)
	if err != nil {
		failure("the answer's checkpoint: %v", err)
	}
	name := func(k int) string {
		d := disclosures[k]
		return fmt.Sprintf("disclosure %d of %d (index %d, requestId %q)", k+1, len(disclosures), *d.Index, d.RequestID)
	}

	// The indexes ascending, each once, inside the tree; the stored hashes ProveRecord reads
	// for them all.
	asked := recorder{}
	for k, d := range disclosures {
		if k > 0 && *d.Index <= *disclosures[k-1].Index {
			failure("%s is not after the one before it (index %d): the disclosures are in ascending index, each once", name(k), *disclosures[k-1].Index)
		}
		if *d.Index >= tree.N {
			failure("%s is not in the tree of %d records the checkpoint signs", name(k), tree.N)
		}
		if _, err := tlog.ProveRecord(tree.N, *d.Index, asked); err != nil {
			failure("%s: %v", name(k), err)
		}
	}
	indexes := make([]int64, 0, len(asked))
	for i := range asked {
		indexes = append(indexes, i)
	}
	sort.Slice(indexes, func(x, y int) bool { return indexes[x] < indexes[y] })
	if len(proof.Hashes)%tlog.HashSize != 0 || len(proof.Hashes)/tlog.HashSize != len(indexes) {
		failure("the proof holds %d bytes of hashes, and its disclosures' proofs in the tree of %d need %d hashes (%d bytes): hashes were added or left out",
			len(proof.Hashes), tree.N, len(indexes), len(indexes)*tlog.HashSize)
	}
	hashes := make(stored, len(indexes))
	for k, i := range indexes {
		var h tlog.Hash
		copy(h[:], proof.Hashes[k*tlog.HashSize:(k+1)*tlog.HashSize])
		hashes[i] = h
	}

	// Each disclosure on its own, as Go proves any record.
	for k, d := range disclosures {
		p, err := tlog.ProveRecord(tree.N, *d.Index, hashes)
		if err != nil {
			failure("%s is not proved: %v", name(k), err)
		}
		if err := tlog.CheckRecord(p, tree.N, tree.Hash, *d.Index, tlog.RecordHash(d.Entry)); err != nil {
			failure("%s is not proved: its entry is not leaf %d of the tree of %d records the checkpoint signs (%v)", name(k), *d.Index, tree.N, err)
		}
	}
	fmt.Printf("proved %d disclosures of %s against the checkpoint of %d records of %s\n",
		len(disclosures), a.Content.Crn, tree.N, v.Name())
}
