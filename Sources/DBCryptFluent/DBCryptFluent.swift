// DBCryptFluent is empty unless the package's Fluent trait is enabled.
