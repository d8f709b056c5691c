// c2sp-check: the independent verifier of the audit log's formats, on Go's reference
// implementation of signed notes and transparency-log trees (golang.org/x/mod/sumdb/note and
// sumdb/tlog, Debian's golang-golang-x-mod-dev). It reads checks from standard input, one a
// line, and prints "ok" or "fail: REASON" for each, so one compile serves a whole test:
//
//	note VKEY_FILE NOTE_FILE                         the note opens with the key, as a checkpoint
//	open VKEY_FILE NOTE_FILE                         the note opens with the key (note.Open alone):
//	                                                 "ok N", N the signatures verified
//	incl VKEY_FILE ENTRY_FILE PROOF_FILE             a tlog-proof@v1 of the entry
//	cons VKEY_FILE OLD_CHECKPOINT NEW_CHECKPOINT HASHES_FILE   a consistency proof
//	tiles VKEY_FILE ARCHIVE_DIR                      a tlog-tiles archive: every leaf hash read
//	                                                 by tlog.TileHashReader against its checkpoint,
//	                                                 and each entry's tlog.RecordHash equal to it
//	cosig VKEY_FILE WITNESS_VKEYS_FILE NOTE_FILE     the note opens with the log's key and the
//	                                                 cosigners' (tlog-cosignature/v1, one vkey of
//	                                                 type 0x04 a line), the log's signature among
//	                                                 those verified: "ok N", N the cosignatures
//	                                                 verified
//
// Run with: GO111MODULE=off GOPATH=/usr/share/gocode go run main.go
package main

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func verifier(path string) (note.Verifier, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return note.NewVerifier(strings.TrimSpace(string(b)))
}

// checkpoint opens a signed checkpoint note and reads its body: origin, size, root. (tlog's
// ParseTree reads only the Go checksum database's own origin, so the body is read here.)
func checkpoint(v note.Verifier, msg []byte) (string, tlog.Tree, error) {
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return "", tlog.Tree{}, err
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 {
		return "", tlog.Tree{}, errors.New("checkpoint body has fewer than three lines")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return "", tlog.Tree{}, fmt.Errorf("bad size line %q", lines[1])
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		return "", tlog.Tree{}, err
	}
	if lines[0] != v.Name() {
		return "", tlog.Tree{}, fmt.Errorf("origin %q is not the key's name %q", lines[0], v.Name())
	}
	return lines[0], tlog.Tree{N: size, Hash: root}, nil
}

// cosigner is a note.Verifier for a C2SP tlog-cosignature/v1 key (Ed25519, type 0x04), which
// note.NewVerifier does not read: its signature is an 8-byte big-endian timestamp and an
// Ed25519 signature over "cosignature/v1\ntime T\n" followed by the note's text.
type cosigner struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

func (c cosigner) Name() string    { return c.name }
func (c cosigner) KeyHash() uint32 { return c.hash }

func (c cosigner) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	if t > math.MaxInt64 {
		return false
	}
	signed := append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", t)), msg...)
	return ed25519.Verify(c.key, signed, sig[8:])
}

// newCosigner reads a cosigner's vkey NAME+KEYHASH+BASE64(0x04 || KEY), its key hash checked:
// SHA-256(NAME || "\n" || 0x04 || KEY)[:4].
func newCosigner(vkey string) (note.Verifier, error) {
	name, rest, ok1 := strings.Cut(vkey, "+")
	hash16, key64, ok2 := strings.Cut(rest, "+")
	if !ok1 || !ok2 || len(hash16) != 8 {
		return nil, fmt.Errorf("malformed cosigner key %q", vkey)
	}
	hash, err := strconv.ParseUint(hash16, 16, 32)
	if err != nil {
		return nil, fmt.Errorf("malformed cosigner key hash %q", hash16)
	}
	key, err := base64.StdEncoding.DecodeString(key64)
	if err != nil || len(key) != 1+ed25519.PublicKeySize || key[0] != 0x04 {
		return nil, fmt.Errorf("cosigner key %q is not 0x04 and an Ed25519 key", name)
	}
	sum := sha256.Sum256(append([]byte(name+"\n"), key...))
	if binary.BigEndian.Uint32(sum[:4]) != uint32(hash) {
		return nil, fmt.Errorf("cosigner key %q: its key hash does not match", name)
	}
	return cosigner{name: name, hash: uint32(hash), key: ed25519.PublicKey(key[1:])}, nil
}

func hashes(lines []string) ([]tlog.Hash, error) {
	var out []tlog.Hash
	for _, line := range lines {
		h, err := tlog.ParseHash(line)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// tileDir reads a C2SP tlog-tiles directory for tlog.TileHashReader. Go names a tile
// tile/H/L/N[.p/W]; tlog-tiles leaves the height out, and names the entry bundles
// tile/entries/N where Go has tile/H/data/N.
type tileDir struct{ dir string }

func (t tileDir) Height() int { return 8 }

func (t tileDir) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, tile := range tiles {
		data, err := os.ReadFile(filepath.Join(t.dir, strings.Replace(tile.Path(), "tile/8/", "tile/", 1)))
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

func (t tileDir) SaveTiles(tiles []tlog.Tile, data [][]byte) {}

func archive(v note.Verifier, dir string) error {
	msg, err := os.ReadFile(filepath.Join(dir, "checkpoint"))
	if err != nil {
		return err
	}
	_, tree, err := checkpoint(v, msg)
	if err != nil {
		return err
	}
	indexes := make([]int64, tree.N)
	for i := range indexes {
		indexes[i] = tlog.StoredHashIndex(0, int64(i))
	}
	hashes, err := tlog.TileHashReader(tree, tileDir{dir}).ReadHashes(indexes)
	if err != nil {
		return err
	}
	for b := int64(0); b*256 < tree.N; b++ {
		bundle := tlog.Tile{H: 8, L: -1, N: b, W: 256}.Path()
		data, err := os.ReadFile(filepath.Join(dir, strings.Replace(bundle, "tile/8/data/", "tile/entries/", 1)))
		if err != nil {
			return err
		}
		for i := int64(0); i < 256; i++ {
			if len(data) < 2 || len(data) < 2+(int(data[0])<<8|int(data[1])) {
				return fmt.Errorf("entry bundle %d is cut short", b)
			}
			n := int(data[0])<<8 | int(data[1])
			if tlog.RecordHash(data[2:2+n]) != hashes[b*256+i] {
				return fmt.Errorf("entry %d does not hash to its leaf in the tiles", b*256+i)
			}
			data = data[2+n:]
		}
		if len(data) != 0 {
			return fmt.Errorf("entry bundle %d holds more than 256 entries", b)
		}
	}
	return nil
}

func check(args []string) error {
	if len(args) < 3 {
		return errors.New("too few arguments")
	}
	v, err := verifier(args[1])
	if err != nil {
		return err
	}
	switch args[0] {
	case "cosig":
		if len(args) != 4 {
			return errors.New("cosig VKEY WITNESS_VKEYS NOTE")
		}
		list, err := os.ReadFile(args[2])
		if err != nil {
			return err
		}
		verifiers := []note.Verifier{v}
		for _, line := range strings.Fields(string(list)) {
			c, err := newCosigner(line)
			if err != nil {
				return err
			}
			verifiers = append(verifiers, c)
		}
		msg, err := os.ReadFile(args[3])
		if err != nil {
			return err
		}
		n, err := note.Open(msg, note.VerifierList(verifiers...))
		if err != nil {
			return err
		}
		logSigned, cosigned := false, 0
		for _, sig := range n.Sigs {
			if sig.Name == v.Name() && sig.Hash == v.KeyHash() {
				logSigned = true
			} else {
				cosigned++
			}
		}
		if !logSigned {
			return errors.New("the log's signature is not among those verified")
		}
		return okWith(cosigned)
	case "tiles":
		return archive(v, args[2])
	case "open":
		// note.Open alone: a signed note, whatever its text. "ok N": N signatures verified.
		msg, err := os.ReadFile(args[2])
		if err != nil {
			return err
		}
		n, err := note.Open(msg, note.VerifierList(v))
		if err != nil {
			return err
		}
		return okWith(len(n.Sigs))
	case "note":
		msg, err := os.ReadFile(args[2])
		if err != nil {
			return err
		}
		_, _, err = checkpoint(v, msg)
		return err
	case "incl":
		if len(args) != 4 {
			return errors.New("incl VKEY ENTRY PROOF")
		}
		entry, err := os.ReadFile(args[2])
		if err != nil {
			return err
		}
		proof, err := os.ReadFile(args[3])
		if err != nil {
			return err
		}
		head, cp, ok := bytes.Cut(proof, []byte("\n\n"))
		lines := strings.Split(string(head), "\n")
		if !ok || lines[0] != "c2sp.org/tlog-proof@v1" {
			return errors.New("not a c2sp.org/tlog-proof@v1")
		}
		lines = lines[1:]
		if len(lines) > 0 && strings.HasPrefix(lines[0], "extra ") {
			lines = lines[1:]
		}
		if len(lines) == 0 || !strings.HasPrefix(lines[0], "index ") {
			return errors.New("no index line")
		}
		index, err := strconv.ParseInt(strings.TrimPrefix(lines[0], "index "), 10, 64)
		if err != nil {
			return err
		}
		path, err := hashes(lines[1:])
		if err != nil {
			return err
		}
		_, tree, err := checkpoint(v, cp)
		if err != nil {
			return err
		}
		return tlog.CheckRecord(path, tree.N, tree.Hash, index, tlog.RecordHash(entry))
	case "cons":
		if len(args) != 5 {
			return errors.New("cons VKEY OLD NEW HASHES")
		}
		oldNote, err := os.ReadFile(args[2])
		if err != nil {
			return err
		}
		newNote, err := os.ReadFile(args[3])
		if err != nil {
			return err
		}
		list, err := os.ReadFile(args[4])
		if err != nil {
			return err
		}
		_, old, err := checkpoint(v, oldNote)
		if err != nil {
			return err
		}
		_, cur, err := checkpoint(v, newNote)
		if err != nil {
			return err
		}
		path, err := hashes(strings.Fields(string(list)))
		if err != nil {
			return err
		}
		return tlog.CheckTree(path, cur.N, cur.Hash, old.N, old.Hash)
	}
	return fmt.Errorf("unknown check %q", args[0])
}

// okCount is a check that passed with a count to report ("ok N").
type okCount int

func (o okCount) Error() string { return fmt.Sprintf("ok %d", int(o)) }

func okWith(n int) error { return okCount(n) }

func main() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		err := check(strings.Fields(in.Text()))
		if count, passed := err.(okCount); passed {
			fmt.Printf("ok %d\n", int(count))
		} else if err != nil {
			fmt.Printf("fail: %v\n", strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Println("ok")
		}
	}
}
