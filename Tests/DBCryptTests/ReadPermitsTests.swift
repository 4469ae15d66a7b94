import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import DBCrypt

/// ReadPermits on real threads: a taker of every permit gets them while
/// reads keep coming, new reads wait behind it, and one that gives up at
/// its deadline holds none.
final class ReadPermitsTests: XCTestCase {
    /// Two threads read without pause, as a pool's readers under load do:
    /// each gives its permit back and asks again at once. A semaphore lets
    /// the thread that gave take back first; these permits go to the taker
    /// of them all as soon as the reads under way end.
    func testATakerOfAllIsNotStarvedByReadsThatKeepComing() {
        let permits = ReadPermits(count: 2)
        let stop = Atomic(false)
        let done = DispatchGroup()
        for _ in 0..<2 {
            DispatchQueue.global().async(group: done) {
                while !stop.load(ordering: .relaxed) {
                    permits.take()
                    usleep(10_000)
                    permits.give()
                }
            }
        }
        var failed = 0
        var longest = 0.0
        for _ in 0..<30 {
            let asked = Date()
            if permits.takeAll(by: Date(timeIntervalSinceNow: 1)) {
                longest = max(longest, Date().timeIntervalSince(asked))
                permits.giveAll()
            } else {
                failed += 1
            }
            usleep(1_000)
        }
        stop.store(true, ordering: .relaxed)
        done.wait()
        XCTAssertEqual(failed, 0, "reads that kept coming held the permits past the deadline")
        // It waits for the reads under way (10 ms) only; behind a semaphore
        // it waited 0.65-0.94 s here, and sometimes past the deadline.
        XCTAssertLessThan(longest, 0.25, "reads that kept coming went first")
    }

    /// A read asked for after the taker of all began to wait runs only once
    /// the taker gives the permits back, even though a permit was free.
    func testNewReadsWaitBehindATakerOfAll() {
        let permits = ReadPermits(count: 2)
        let events = Mutex<[String]>([])
        permits.take()  // a read under way
        let tookAll = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            XCTAssertTrue(permits.takeAll(by: Date(timeIntervalSinceNow: 10)))
            events.withLock { $0.append("took all") }
            tookAll.signal()
        }
        usleep(100_000)
        let readDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            permits.take()
            events.withLock { $0.append("new read") }
            permits.give()
            readDone.signal()
        }
        usleep(100_000)
        XCTAssertEqual(events.withLock { $0 }, [], "a read began while a taker of all waited")
        permits.give()  // the read under way ends
        tookAll.wait()
        usleep(100_000)
        XCTAssertEqual(events.withLock { $0 }, ["took all"])
        permits.giveAll()
        readDone.wait()
        XCTAssertEqual(events.withLock { $0 }, ["took all", "new read"])
    }

    /// A taker of all that gives up at its deadline holds no permit: the
    /// free one is taken at once, and the rest once the read ends.
    func testATakerOfAllThatGivesUpHoldsNone() {
        let permits = ReadPermits(count: 2)
        permits.take()
        let started = Date()
        XCTAssertFalse(permits.takeAll(by: Date(timeIntervalSinceNow: 0.2)))
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.2)
        permits.take()
        permits.give()
        permits.give()
        XCTAssertTrue(permits.takeAll(by: Date(timeIntervalSinceNow: 0.2)))
        permits.giveAll()
    }
}
