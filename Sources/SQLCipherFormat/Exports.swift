// The key, the hashes and the errors of settings come from the core that
// DBCrypt and DBCryptSeal share: `import SQLCipherFormat` brings them.
@_exported import DBCryptCore
