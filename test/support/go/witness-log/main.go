// witness-log: a transparency log, written on Go's reference implementation of signed notes and
// trees (golang.org/x/mod/sumdb/note and sumdb/tlog, Debian's golang-golang-x-mod-dev), that
// asks a running `case-read witness serve` to cosign its checkpoints (C2SP tlog-witness
// v1.0.0, add-checkpoint) and checks each answer, so the witness is judged by code someone
// else wrote rather than by this project's own client:
//
//	witness-log keys DIR
//	    makes the log keys (note.GenerateKey) in DIR: two logs the witness trusts, an impostor
//	    under the first log's name, and a log it does not know; prints the WITNESS_LOGS file
//	    ("log <vkey>" for the two trusted logs).
//	witness-log walk DIR URL WITNESS_VKEY
//	    plays the logs against the witness at URL and prints one line per step:
//	    "STEP STATUS DETAIL". DETAIL is "verified" for a 200 whose cosignature/v1 opens with Go's
//	    note.Open (a custom note.Verifier for the witness's 0x04 key), "size=N type=T" for a 409,
//	    "-" otherwise, or "error: ..." when the step could not be made.
//
// Run with: GO111MODULE=off GOPATH=/usr/share/gocode go build -o BIN main.go
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const (
	originA       = "witness-test.example/log-a"
	originB       = "witness-test.example/log-b"
	originUnknown = "witness-test.example/unknown"
)

// keyFiles: the keys "keys" makes, by file name, and the origin each signs as.
var keyFiles = []struct{ file, origin string }{
	{"log-a.skey", originA},
	{"log-b.skey", originB},
	{"impostor.skey", originA},
	{"unknown.skey", originUnknown},
}

func keys(dir string) error {
	for _, k := range keyFiles {
		skey, vkey, err := note.GenerateKey(rand.Reader, k.origin)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, k.file), []byte(skey), 0o600); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, k.file+".vkey"), []byte(vkey), 0o644); err != nil {
			return err
		}
		if k.file == "log-a.skey" || k.file == "log-b.skey" {
			fmt.Printf("log %s\n", vkey)
		}
	}
	return nil
}

// tree: a log's records and every stored hash, as tlog keeps them.
type tree struct {
	hashes []tlog.Hash
	n      int64
}

func (t *tree) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x >= int64(len(t.hashes)) {
			return nil, fmt.Errorf("hash %d not stored", x)
		}
		out[i] = t.hashes[x]
	}
	return out, nil
}

// newTree: a tree of n records "PREFIX i".
func newTree(prefix string, n int64) *tree {
	t := &tree{}
	for i := int64(0); i < n; i++ {
		stored, err := tlog.StoredHashes(t.n, []byte(fmt.Sprintf("%s %d\n", prefix, i)), t)
		if err != nil {
			panic(err)
		}
		t.hashes = append(t.hashes, stored...)
		t.n++
	}
	return t
}

func (t *tree) root(n int64) tlog.Hash {
	h, err := tlog.TreeHash(n, t)
	if err != nil {
		panic(err)
	}
	return h
}

func (t *tree) proof(old, n int64) []tlog.Hash {
	p, err := tlog.ProveTree(n, old, t)
	if err != nil {
		panic(err)
	}
	return p
}

// checkpoint: the signed tlog-checkpoint of a tree of size n and root h, by each signer.
func checkpoint(origin string, n int64, h tlog.Hash, signers ...note.Signer) []byte {
	text := fmt.Sprintf("%s\n%d\n%s\n", origin, n, base64.StdEncoding.EncodeToString(h[:]))
	msg, err := note.Sign(&note.Note{Text: text}, signers...)
	if err != nil {
		panic(err)
	}
	return msg
}

func body(old int64, proof []tlog.Hash, signed []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", old)
	for _, h := range proof {
		fmt.Fprintf(&b, "%s\n", base64.StdEncoding.EncodeToString(h[:]))
	}
	b.WriteString("\n")
	b.Write(signed)
	return b.Bytes()
}

// cosigner: a note.Verifier for a C2SP tlog-cosignature/v1 (Ed25519, key type 0x04) key.
// A signature is timestamp(8, big-endian) || Ed25519 over "cosignature/v1\ntime T\n" || text.
type cosigner struct {
	name string
	hash uint32
	key  ed25519.PublicKey
	// times: the timestamps of the cosignatures verified.
	times []uint64
}

func (c *cosigner) Name() string    { return c.name }
func (c *cosigner) KeyHash() uint32 { return c.hash }
func (c *cosigner) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig[:8])
	signed := append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", t)), msg...)
	if !ed25519.Verify(c.key, signed, sig[8:]) {
		return false
	}
	c.times = append(c.times, t)
	return true
}

// newCosigner reads a cosigner vkey, NAME+KEYID+BASE64(0x04 || key), its key id checked.
func newCosigner(vkey string) (*cosigner, error) {
	parts := strings.SplitN(strings.TrimSpace(vkey), "+", 3)
	if len(parts) != 3 {
		return nil, errors.New("a vkey is NAME+KEYID+KEY")
	}
	key, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(key) != 1+ed25519.PublicKeySize || key[0] != 0x04 {
		return nil, errors.New("not a cosignature/v1 key (0x04 and 32 bytes)")
	}
	id := sha256.Sum256(append([]byte(parts[0]+"\n"), key...))
	if hex.EncodeToString(id[:4]) != parts[1] {
		return nil, errors.New("the key id does not match the name and key")
	}
	return &cosigner{name: parts[0], hash: binary.BigEndian.Uint32(id[:4]), key: key[1:]}, nil
}

type answer struct {
	status      int
	contentType string
	body        string
}

func post(url string, b []byte) (answer, error) {
	res, err := http.Post(url+"/add-checkpoint", "text/plain", bytes.NewReader(b))
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{res.StatusCode, res.Header.Get("Content-Type"), string(got)}, nil
}

func signer(dir, file string) note.Signer {
	skey, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		panic(err)
	}
	s, err := note.NewSigner(string(skey))
	if err != nil {
		panic(err)
	}
	return s
}

// verifier: the note.Verifier of a key "keys" made, from its vkey file.
func verifier(dir, file string) note.Verifier {
	vkey, err := os.ReadFile(filepath.Join(dir, file+".vkey"))
	if err != nil {
		panic(err)
	}
	v, err := note.NewVerifier(string(vkey))
	if err != nil {
		panic(err)
	}
	return v
}

// cosigned: whether the 200 answer's lines are cosignature/v1 lines of the witness on the
// checkpoint, opened with note.Open beside the log's own signature, timestamped now.
func cosigned(signed []byte, a answer, log note.Verifier, vkey string) string {
	if !strings.HasPrefix(a.body, "— ") || !strings.HasSuffix(a.body, "\n") {
		return fmt.Sprintf("unverified: not signature lines: %q", a.body)
	}
	w, err := newCosigner(vkey)
	if err != nil {
		return "unverified: " + err.Error()
	}
	n, err := note.Open(append(append([]byte{}, signed...), a.body...), note.VerifierList(log, w))
	if err != nil {
		return "unverified: " + err.Error()
	}
	if len(n.UnverifiedSigs) != 0 {
		return fmt.Sprintf("unverified: %d signature lines by unknown keys", len(n.UnverifiedSigs))
	}
	found := false
	for _, sig := range n.Sigs {
		if sig.Name == w.name && sig.Hash == w.hash {
			found = true
		}
	}
	if !found || len(w.times) == 0 {
		return "unverified: no cosignature by the witness's key"
	}
	now := uint64(time.Now().Unix())
	for _, t := range w.times {
		if t == 0 || t+300 < now || t > now+300 {
			return fmt.Sprintf("unverified: timestamp %d is not now (%d)", t, now)
		}
	}
	return "verified"
}

func walk(dir, url, vkey string) {
	a, b := signer(dir, "log-a.skey"), signer(dir, "log-b.skey")
	impostor, unknown := signer(dir, "impostor.skey"), signer(dir, "unknown.skey")
	va, vb := verifier(dir, "log-a.skey"), verifier(dir, "log-b.skey")
	logA := newTree("a", 12)
	other := newTree("fork", 9)

	step := func(name string, old int64, proof []tlog.Hash, signed []byte, log note.Verifier) {
		res, err := post(url, body(old, proof, signed))
		if err != nil {
			fmt.Printf("%s 0 error: %v\n", name, err)
			return
		}
		detail := "-"
		switch res.status {
		case 200:
			detail = cosigned(signed, res, log, vkey)
		case 409:
			detail = fmt.Sprintf("size=%s type=%s", strings.TrimSuffix(res.body, "\n"), res.contentType)
			if !strings.HasSuffix(res.body, "\n") {
				detail += " (no final newline)"
			}
		}
		fmt.Printf("%s %d %s\n", name, res.status, detail)
	}
	cp := func(n int64) []byte { return checkpoint(originA, n, logA.root(n), a) }

	// Log A: cosigned from nothing, grown with a proof, then every refusal; nothing moves.
	step("first", 0, nil, cp(5), va)
	step("grow", 5, logA.proof(5, 9), cp(9), va)
	step("stale-old", 5, logA.proof(5, 12), cp(12), va)
	bad := logA.proof(9, 12)
	bad[0][0] ^= 1
	step("bad-proof", 9, bad, cp(12), va)
	step("same-size-other-root", 9, nil, checkpoint(originA, 9, other.root(9), a), va)
	step("same-size-same-root", 9, nil, cp(9), va)
	step("old-after-size", 12, nil, cp(9), va)
	step("wrong-key", 9, logA.proof(9, 12), checkpoint(originA, 12, logA.root(12), impostor), va)
	forged := cp(12)
	// A base64 character well inside the signature changed: the key name and id still match.
	i := len(forged) - 10
	if forged[i] == 'A' {
		forged[i] = 'B'
	} else {
		forged[i] = 'A'
	}
	step("bad-signature", 9, logA.proof(9, 12), forged, va)
	step("unknown-origin", 0, nil, checkpoint(originUnknown, 3, newTree("u", 3).root(3), unknown), va)
	step("grow-after-refusals", 9, logA.proof(9, 12), cp(12), va)

	// Log B: the empty tree, and proofs from size 0.
	logB := newTree("b", 3)
	var notEmpty tlog.Hash
	notEmpty[0] = 1
	step("empty-tree-other-root", 0, nil, checkpoint(originB, 0, notEmpty, b), vb)
	step("proof-from-zero", 0, logB.proof(1, 3), checkpoint(originB, 3, logB.root(3), b), vb)
	step("empty-tree", 0, nil, checkpoint(originB, 0, tlog.Hash(sha256.Sum256(nil)), b), vb)
	step("from-empty", 0, nil, checkpoint(originB, 3, logB.root(3), b), vb)
	res, err := post(url, []byte("old 01\n\n"+string(cp(12))))
	if err != nil {
		fmt.Printf("malformed 0 error: %v\n", err)
	} else {
		fmt.Printf("malformed %d -\n", res.status)
	}
}

func main() {
	switch {
	case len(os.Args) == 3 && os.Args[1] == "keys":
		if err := keys(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case len(os.Args) == 5 && os.Args[1] == "walk":
		walk(os.Args[2], os.Args[3], os.Args[4])
	default:
		fmt.Fprintln(os.Stderr, "usage: witness-log keys DIR | walk DIR URL WITNESS_VKEY")
		os.Exit(2)
	}
}
