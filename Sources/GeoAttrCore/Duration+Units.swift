extension Duration {
    /// Whole nanoseconds (saturating far beyond any timeout this project uses).
    package var nanosecondsValue: Int64 {
        let (seconds, attoseconds) = components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }

    /// Seconds as a floating-point number, for messages and JSON.
    package var secondsValue: Double { Double(nanosecondsValue) / 1e9 }
}
