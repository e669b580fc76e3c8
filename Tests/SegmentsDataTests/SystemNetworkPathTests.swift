import Foundation
import SegmentsDomain
import SegmentsTesting
import Testing

@testable import SegmentsData

/// The live network path's code that every platform builds (Behaviour N3): the status it keeps,
/// the changes it tells, what the app posts, and the platform monitor it starts (on Apple platforms
/// `NWPathMonitor`, whose file only maps a path to a status).
@Suite(Hang.timeLimit(minutes: 1)) struct SystemNetworkPathTests {
    /// A platform monitor a test drives: how often it was started and stopped, and its report.
    final class FakeMonitor: Sendable {
        private let state = Locked((starts: 0, stops: 0, report: (@Sendable (NetworkPathStatus) -> Void)?.none))
        var starts: Int { state.value.starts }
        var stops: Int { state.value.stops }

        var start: SystemNetworkPath.StartMonitor {
            { [state] report in
                state.withLock {
                    $0.starts += 1
                    $0.report = report
                }
                return LifecycleObservation { state.withLock { $0.stops += 1 } }
            }
        }

        func report(_ status: NetworkPathStatus) {
            state.value.report?(status)
        }
    }

    @Test func n3_onLinuxThePathIsUsableUntilTheAppPostsOtherwiseAndOnlyChangesAreTold() {
        let path = SystemNetworkPath()
        let told = Recorder<NetworkPathStatus>()
        let observation = path.observe { told.record($0) }
        #expect(told.all == [.usable], "the current status, at once")
        path.post(.unusable)
        path.post(.unusable)
        path.post(.usable)
        #expect(told.all == [.usable, .unusable, .usable])
        #expect(path.status == .usable)
        observation.cancel()
        path.post(.unusable)
        #expect(told.all == [.usable, .unusable, .usable], "nothing after the observation ended")
    }

    @Test func n3_theMonitorStartsOnceOnTheFirstObservationAndItsReportsReachEveryObserver() {
        let monitor = FakeMonitor()
        var path: SystemNetworkPath? = SystemNetworkPath(initial: .usable, startMonitor: monitor.start)
        #expect(monitor.starts == 0, "nothing is started before anyone observes")
        let first = Recorder<NetworkPathStatus>(), second = Recorder<NetworkPathStatus>()
        let a = path?.observe { first.record($0) }
        let b = path?.observe { second.record($0) }
        #expect(monitor.starts == 1)
        monitor.report(.unusable)
        monitor.report(.unusable)
        #expect(first.all == [.usable, .unusable])
        #expect(second.all == [.usable, .unusable])
        #expect(path?.status == .unusable)
        withExtendedLifetime((a, b)) {}
        path = nil
        #expect(monitor.stops == 1, "the monitor ends with the path")
        monitor.report(.usable)
        #expect(first.all == [.usable, .unusable], "a report after the path went tells nobody")
    }

    @Test func n3_theFakeTellsTheCurrentStatusAtOnceThenEveryPost() {
        let path = ManualNetworkPath(.unusable)
        let told = Recorder<NetworkPathStatus>()
        var observation: LifecycleObservation? = path.observe { told.record($0) }
        path.goOnline()
        path.goOffline()
        #expect(told.all == [.unusable, .usable, .unusable])
        #expect(path.observerCount == 1)
        observation = nil
        #expect(path.observerCount == 0)
        _ = observation
    }
}
