import Foundation

/// Time in tests: every deadline a test sets is a backstop against a hang,
/// never what decides its result, and all of them stretch by one setting.
///
/// `GATEWAY_TEST_TIME_SCALE` (a number, 1 when unset) multiplies each
/// backstop: a machine that is slower than the ones the suite is run on (a
/// busy laptop, an emulated CPU) sets it to 2, 4, ... and changes nothing else.
/// A test never asserts that something took *less* than a time: where the
/// product's own deadline is what a test exercises (a call that must time
/// out), the test makes the other side never answer, so the outcome is the
/// same however slow the machine.
public enum TestTime {
    /// The factor every backstop is multiplied by (at least 1).
    public static let scale: Double = {
        guard let text = ProcessInfo.processInfo.environment["GATEWAY_TEST_TIME_SCALE"], let value = Double(text), value >= 1 else { return 1 }
        return value
    }()

    /// `base` stretched by ``scale``.
    public static func backstop(_ base: Duration) -> Duration {
        base * scale
    }

    /// `seconds` stretched by ``scale``, as a `TimeInterval` (a socket option, a `Date` deadline).
    public static func seconds(_ seconds: Double) -> TimeInterval {
        seconds * scale
    }

    /// `minutes` stretched by ``scale``, rounded up: for `.timeLimit(.minutes(…))`,
    /// whose unit is the minute.
    public static func minutes(_ minutes: Int) -> Int {
        Int((Double(minutes) * scale).rounded(.up))
    }

    /// `milliseconds` stretched by ``scale``, for the product's own settings that
    /// a test raises so that a slow machine never trips them (`timeout_ms`, …).
    public static func milliseconds(_ milliseconds: Int) -> Int {
        Int((Double(milliseconds) * scale).rounded(.up))
    }
}

extension Duration {
    /// `self` stretched by ``TestTime/scale``: a test's backstop.
    public var scaled: Duration { TestTime.backstop(self) }
}
