// The key, its errors and the hashes come from the core that SQLCipherFormat
// and DBCryptSeal share: `import DBCrypt` brings them.
@_exported import DBCryptCore
