// The Secret Service's client library: Debian's libsecret-1-dev, or Homebrew's libsecret.
#include <libsecret/secret.h>

// The schema of DBCrypt's items: two string attributes, service and account.
// Items are matched on those alone (not on the schema's name), so that an
// item another tool stored with the same attributes (secret-tool store
// service S account A) is found as well.
static inline const SecretSchema *dbcrypt_secret_schema(void) {
    static const SecretSchema schema = {
        "org.dbcrypt.DatabaseKey", SECRET_SCHEMA_DONT_MATCH_NAME,
        {{"service", SECRET_SCHEMA_ATTRIBUTE_STRING}, {"account", SECRET_SCHEMA_ATTRIBUTE_STRING}, {NULL, 0}}};
    return &schema;
}

// The attributes naming one item; free with g_hash_table_unref.
static inline GHashTable *dbcrypt_secret_attributes(const char *service, const char *account) {
    GHashTable *attributes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    g_hash_table_insert(attributes, g_strdup("service"), g_strdup(service));
    g_hash_table_insert(attributes, g_strdup("account"), g_strdup(account));
    return attributes;
}

// Whether error is libsecret's "the collection or item is locked".
static inline int dbcrypt_secret_error_is_locked(const GError *error) {
    return error != NULL && error->domain == secret_error_get_quark() && error->code == SECRET_ERROR_IS_LOCKED;
}

// Whether error is the service answering "no" (as opposed to not answering):
// access denied, not supported, a limit, bad arguments, a remote error of
// its own, or libsecret's protocol and value errors.
static inline int dbcrypt_secret_error_is_refusal(const GError *error) {
    if (error == NULL) return 0;
    if (error->domain == secret_error_get_quark()) return 1;
    if (error->domain == G_DBUS_ERROR) {
        switch (error->code) {
        case G_DBUS_ERROR_ACCESS_DENIED: case G_DBUS_ERROR_AUTH_FAILED: case G_DBUS_ERROR_NOT_SUPPORTED:
        case G_DBUS_ERROR_LIMITS_EXCEEDED: case G_DBUS_ERROR_INVALID_ARGS: case G_DBUS_ERROR_UNKNOWN_METHOD:
        case G_DBUS_ERROR_UNKNOWN_OBJECT: case G_DBUS_ERROR_UNKNOWN_INTERFACE: case G_DBUS_ERROR_UNKNOWN_PROPERTY:
        case G_DBUS_ERROR_PROPERTY_READ_ONLY: case G_DBUS_ERROR_FAILED: case G_DBUS_ERROR_NO_MEMORY:
            return 1;
        default:
            return 0;
        }
    }
    if (error->domain == G_IO_ERROR) {
        return error->code == G_IO_ERROR_DBUS_ERROR || error->code == G_IO_ERROR_PERMISSION_DENIED
            || error->code == G_IO_ERROR_NOT_SUPPORTED || error->code == G_IO_ERROR_NO_SPACE;
    }
    return 0;
}
