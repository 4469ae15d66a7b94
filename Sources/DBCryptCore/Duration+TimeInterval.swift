extension Duration {
    /// The duration in seconds, as a `TimeInterval` (Foundation's and
    /// Dispatch's unit) takes it.
    package var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
