/**
 * Secrets at rest: random keys (shown once, stored as SHA-256), passwords (scrypt, memory-hard) and the
 * master key that encrypts provider API keys (AES-256-GCM).
 */
import { Context, Data, Effect, Layer, Option, Redacted } from "effect"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { AppConfig } from "./config.ts"

/** A random credential: `prefix` + 32 random bytes (256 bits) in base64url. */
export const generateSecret = (prefix: string): string =>
  `${prefix}${Crypto.randomBytes(32).toString("base64url")}`

/** Random identifiers for rows: `prefix_` + 16 random bytes in base32-ish lowercase hex. */
export const generateId = (prefix: string): string => `${prefix}_${Crypto.randomBytes(12).toString("hex")}`

/** Keys carry 256 bits of entropy, so a plain SHA-256 is a safe, indexable digest. */
export const hashSecret = (secret: string): Buffer => Crypto.createHash("sha256").update(secret, "utf8").digest()

export const constantTimeEqual = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && Crypto.timingSafeEqual(a, b)

/** The first characters of a key, safe to show in listings. */
export const displayPrefix = (secret: string): string => secret.slice(0, secret.indexOf("_") + 1 + 6)

// scrypt with N=2^15, r=8: 32 MiB of memory per hash.
const SCRYPT = { N: 1 << 15, r: 8, p: 1, keyLength: 32, maxmem: 64 * 1024 * 1024 } as const

const scrypt = (password: string, salt: Buffer, params: { N: number; r: number; p: number }) =>
  Effect.async<Buffer, never>((resume) => {
    Crypto.scrypt(password.normalize("NFKC"), salt, SCRYPT.keyLength, { ...params, maxmem: SCRYPT.maxmem }, (error, key) =>
      error ? resume(Effect.die(error)) : resume(Effect.succeed(key)))
  })

export const hashPassword = (password: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    const salt = Crypto.randomBytes(16)
    const key = yield* scrypt(password, salt, SCRYPT)
    return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString("base64")}$${key.toString("base64")}`
  })

export const verifyPassword = (password: string, stored: string): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const [scheme, n, r, p, salt, key] = stored.split("$")
    if (scheme !== "scrypt" || !n || !r || !p || !salt || !key) return false
    const expected = Buffer.from(key, "base64")
    const actual = yield* scrypt(password, Buffer.from(salt, "base64"), { N: Number(n), r: Number(r), p: Number(p) })
    return constantTimeEqual(actual, expected)
  })

export class CryptoError extends Data.TaggedError("CryptoError")<{ readonly message: string }> {}

/** Encrypts and decrypts provider keys with the master key. Ciphertext: `v1.<iv>.<tag>.<data>` (base64url). */
export class SecretBox extends Context.Tag("SecretBox")<SecretBox, {
  readonly encrypt: (plaintext: string) => string
  readonly decrypt: (ciphertext: string) => Effect.Effect<Redacted.Redacted, CryptoError>
}>() {
  static readonly fromKey = (key: Uint8Array): Context.Tag.Service<SecretBox> => ({
    encrypt: (plaintext) => {
      const iv = Crypto.randomBytes(12)
      const cipher = Crypto.createCipheriv("aes-256-gcm", key, iv)
      const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
      return ["v1", iv, cipher.getAuthTag(), data].map((part) =>
        typeof part === "string" ? part : part.toString("base64url")
      ).join(".")
    },
    decrypt: (ciphertext) =>
      Effect.try({
        try: () => {
          const [version, iv, tag, data] = ciphertext.split(".")
          if (version !== "v1" || !iv || !tag || data === undefined) throw new Error("unknown ciphertext format")
          const decipher = Crypto.createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
          decipher.setAuthTag(Buffer.from(tag, "base64url"))
          const plain = Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()])
          return Redacted.make(plain.toString("utf8"))
        },
        catch: () => new CryptoError({ message: "a stored secret cannot be decrypted with the current MASTER_KEY" })
      })
  })

  /**
   * `MASTER_KEY` (32 bytes, base64 or hex) when set; otherwise, for the embedded database only, a key generated
   * once and kept in `DATA_DIR/master.key` (mode 0600). With `DATABASE_URL`, `MASTER_KEY` is required.
   */
  static readonly layer = Layer.effect(
    SecretBox,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const configured = Option.map(config.masterKey, Redacted.value)
      if (Option.isSome(configured)) return SecretBox.fromKey(yield* parseMasterKey(configured.value))
      if (Option.isSome(config.databaseUrl)) {
        return yield* new CryptoError({ message: "MASTER_KEY is required when DATABASE_URL is set" })
      }
      const file = Path.join(Path.resolve(config.dataDir), "master.key")
      const stored = yield* Effect.try({
        try: () => {
          Fs.mkdirSync(Path.dirname(file), { recursive: true, mode: 0o700 })
          if (!Fs.existsSync(file)) {
            Fs.writeFileSync(file, Crypto.randomBytes(32).toString("base64") + "\n", { mode: 0o600, flag: "wx" })
          }
          return Fs.readFileSync(file, "utf8").trim()
        },
        catch: (cause) => new CryptoError({ message: `cannot read or create ${file}: ${String(cause)}` })
      })
      return SecretBox.fromKey(yield* parseMasterKey(stored))
    })
  )
}

const parseMasterKey = (value: string): Effect.Effect<Uint8Array, CryptoError> => {
  const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, "hex") : Buffer.from(value, "base64")
  return key.length === 32
    ? Effect.succeed(key)
    : Effect.fail(new CryptoError({ message: "MASTER_KEY must be 32 bytes, base64 or hex encoded" }))
}
