import { describe, expect, it } from 'vitest';
import { sha256 } from '../crypto.js';
import { decodeBase64, decodeHash, encodeBase64 } from './base64.js';
import { emptyRoot } from './merkle.js';
import {
  encodeSignerKey,
  encodeVerifierKey,
  formatCheckpoint,
  generateLogSigner,
  logSignerFromPrivateKey,
  openCheckpoint,
  openNote,
  parseCheckpoint,
  parseNote,
  parseSignerKey,
  parseVerifierKey,
  signCheckpoint,
  signNote,
} from './signed-note.js';

// Vectors of Go's golang.org/x/mod/sumdb/note (example_test.go) and of c2sp.org/signed-note.
const PETER_SIGNER = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const PETER_VERIFIER = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const PETER_TEXT =
  "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const PETER_NOTE = `${PETER_TEXT}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;
const SPEC_VERIFIER = 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k';
const SPEC_NOTE =
  'This is an example message.\n\n\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';

describe('verifier and signer keys', () => {
  it('reads and writes the keys of Go sumdb/note byte for byte', () => {
    const signer = parseSignerKey(PETER_SIGNER);
    expect(signer.verifierKey).toBe(PETER_VERIFIER);
    expect(encodeSignerKey(signer)).toBe(PETER_SIGNER);
    const key = parseVerifierKey(PETER_VERIFIER);
    expect(key.name).toBe('PeterNeumann');
    expect(Buffer.from(key.keyId).toString('hex')).toBe('c74f20a3');
    expect(encodeVerifierKey(key.name, key.publicKey)).toBe(PETER_VERIFIER);
    expect(parseVerifierKey(SPEC_VERIFIER).name).toBe('example.com/foo');
  });

  it('accepts a key whose base64 holds a +', () => {
    expect(parseVerifierKey('TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6').name).toBe('TEST');
  });

  it('refuses every truncation and every changed character of a verifier key, with a reason', () => {
    for (let end = 0; end < PETER_VERIFIER.length; end++) {
      expect(() => parseVerifierKey(PETER_VERIFIER.slice(0, end))).toThrow();
    }
    for (let at = 0; at < PETER_VERIFIER.length; at++) {
      const code = PETER_VERIFIER.charCodeAt(at);
      const changed = `${PETER_VERIFIER.slice(0, at)}${String.fromCharCode(code + 1)}${PETER_VERIFIER.slice(at + 1)}`;
      expect(() => parseVerifierKey(changed), changed).toThrow();
    }
    expect(() =>
      parseVerifierKey('PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'),
    ).toThrow(/does not match/);
    expect(() => parseVerifierKey('nope')).toThrow(/<name>\+<8 hex key id>\+<base64 key>/);
    expect(() => parseVerifierKey('a b+c74f20a3+AA==')).toThrow(/key name/);
  });

  it('refuses names with spaces or plus signs', () => {
    expect(() => encodeVerifierKey('has space', new Uint8Array(32))).toThrow(/key name/);
    expect(() => encodeVerifierKey('a+b', new Uint8Array(32))).toThrow(/key name/);
    expect(() => encodeVerifierKey('ok', new Uint8Array(31))).toThrow(/32 bytes/);
  });
});

describe('signed notes', () => {
  it('signs exactly as Go sumdb/note does', () => {
    expect(signNote(PETER_TEXT, parseSignerKey(PETER_SIGNER))).toBe(PETER_NOTE);
  });

  it('opens the reference notes', () => {
    expect(openNote(PETER_NOTE, PETER_VERIFIER)).toEqual({ ok: true, value: PETER_TEXT });
    expect(openNote(SPEC_NOTE, SPEC_VERIFIER)).toEqual({ ok: true, value: 'This is an example message.\n' });
  });

  it('ignores signatures by other keys and refuses a note without ours', () => {
    const other = generateLogSigner('other.example/log');
    const cosigned = `${signNote(PETER_TEXT, other)}${PETER_NOTE.slice(PETER_TEXT.length + 1)}`;
    expect(openNote(cosigned, PETER_VERIFIER).ok).toBe(true);
    expect(openNote(cosigned, other.verifierKey).ok).toBe(true);
    expect(openNote(PETER_NOTE, other.verifierKey)).toEqual({
      ok: false,
      reason: expect.stringMatching(/no signature by key other.example\/log/),
    });
  });

  it('refuses a note whose text or signature changed', () => {
    const changedText = PETER_NOTE.replace('cryptography', 'cryptographY');
    expect(openNote(changedText, PETER_VERIFIER)).toEqual({
      ok: false,
      reason: expect.stringMatching(/invalid signature/),
    });
    const blobAt = PETER_NOTE.indexOf('x08go') + 10;
    const changedSignature = `${PETER_NOTE.slice(0, blobAt)}A${PETER_NOTE.slice(blobAt + 1)}`;
    expect(openNote(changedSignature, PETER_VERIFIER).ok).toBe(false);
  });

  it('refuses malformed notes with a reason', () => {
    const cases: Array<[string, RegExp]> = [
      [PETER_TEXT, /no blank line/],
      [PETER_NOTE.slice(0, -1), /end with a newline/],
      [PETER_NOTE.replace('\u2014', '-'), /does not start with/],
      [PETER_NOTE.replace('x08go', 'x08g!'), /not base64/],
      [`a\u0007b\n${PETER_NOTE.slice(PETER_TEXT.length)}`, /control character/],
      [PETER_NOTE.replace('PeterNeumann ', 'PeterNeumann'), /key name|not base64/],
    ];
    for (const [note, reason] of cases) {
      expect(() => parseNote(note)).toThrow(reason);
      expect(openNote(note, PETER_VERIFIER)).toEqual({ ok: false, reason: expect.stringMatching(reason) });
    }
    const many = `${PETER_TEXT}\n${`\u2014 x AAAAAAAA\n`.repeat(101)}`;
    expect(() => parseNote(many)).toThrow(/more than 100/);
  });

  it('refuses text that cannot be a note', () => {
    const signer = generateLogSigner('log');
    expect(() => signNote('no newline', signer)).toThrow(/newline/);
    expect(() => signNote('a\n\nb\n', signer)).toThrow(/blank line/);
    expect(() => signNote('\n', signer)).toThrow();
  });
});

describe('checkpoints', () => {
  const signer = logSignerFromPrivateKey('callgate.test/log', sha256('checkpoint test key'));
  const root = sha256('a root');

  it('formats the C2SP tlog-checkpoint body', () => {
    expect(formatCheckpoint({ origin: 'callgate.test/log', size: 42, root })).toBe(
      `callgate.test/log\n42\n${encodeBase64(root)}\n`,
    );
    expect(parseCheckpoint(`o\n0\n${encodeBase64(emptyRoot())}\nextra line\n`)).toEqual({
      origin: 'o',
      size: 0,
      root: emptyRoot(),
      extensions: ['extra line'],
    });
  });

  it('signs and opens a checkpoint', () => {
    const note = signCheckpoint({ origin: 'callgate.test/log', size: 42, root }, signer);
    expect(note).toMatch(/^callgate\.test\/log\n42\n[A-Za-z0-9+/]{43}=\n\n\u2014 callgate\.test\/log \S+\n$/);
    const opened = openCheckpoint(note, signer.verifierKey);
    expect(opened).toEqual({ ok: true, value: { origin: 'callgate.test/log', size: 42, root } });
  });

  it('refuses a checkpoint with a changed size, root or signature, or under another key', () => {
    const note = signCheckpoint({ origin: 'callgate.test/log', size: 42, root }, signer);
    expect(openCheckpoint(note.replace('\n42\n', '\n43\n'), signer.verifierKey).ok).toBe(false);
    const rootLine = encodeBase64(root);
    const otherRoot = encodeBase64(sha256('another root'));
    expect(openCheckpoint(note.replace(rootLine, otherRoot), signer.verifierKey).ok).toBe(false);
    const other = logSignerFromPrivateKey('callgate.test/log', sha256('another key'));
    expect(openCheckpoint(note, other.verifierKey)).toEqual({
      ok: false,
      reason: expect.stringMatching(/no signature by key/),
    });
    for (let at = note.indexOf('\u2014'); at < note.length - 1; at++) {
      const changed = `${note.slice(0, at)}${note[at] === 'A' ? 'B' : 'A'}${note.slice(at + 1)}`;
      if (changed !== note) expect(openCheckpoint(changed, signer.verifierKey).ok, `at ${at}`).toBe(false);
    }
  });

  it('refuses malformed checkpoint bodies', () => {
    const body = (text: string) => openCheckpoint(signNote(text, signer), signer.verifierKey);
    expect(body(`o\n01\n${encodeBase64(root)}\n`)).toEqual({
      ok: false,
      reason: expect.stringMatching(/size/),
    });
    expect(body(`o\n1\nnot-a-root\n`)).toEqual({ ok: false, reason: expect.stringMatching(/root/) });
    expect(body('o\n1\n')).toEqual({ ok: false, reason: expect.stringMatching(/root/) });
    expect(() => formatCheckpoint({ origin: '', size: 1, root })).toThrow(/origin/);
    expect(() => formatCheckpoint({ origin: 'o', size: -1, root })).toThrow(/size/);
    expect(() => formatCheckpoint({ origin: 'o', size: 1, root: root.subarray(1) })).toThrow(/32 bytes/);
  });
});

describe('strict base64', () => {
  it('accepts only canonical padded base64', () => {
    expect(decodeBase64('AQID')).toEqual(Buffer.from([1, 2, 3]));
    expect(decodeBase64('AQI=')).toEqual(Buffer.from([1, 2]));
    for (const bad of ['AQI', 'AQJ=', 'AQ I=', 'AQ-_', 'AQ==AQ=='])
      expect(decodeBase64(bad), bad).toBeUndefined();
    const hash = encodeBase64(sha256('x'));
    expect(decodeHash(hash)).toEqual(sha256('x'));
    // 'B' sets one of the two padding bits of the last character: same bytes, another string.
    expect(decodeHash(`${hash.slice(0, 42)}B=`)).toBeUndefined();
    expect(decodeHash(hash.slice(0, -1))).toBeUndefined();
  });
});
