import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import DBCrypt
import TestFixtures

/// ReadPermits on real threads: a taker of every permit gets them while
/// reads keep coming, new reads wait behind it, and one that gives up at
/// its deadline holds none.
final class ReadPermitsTests: XCTestCase {
    /// Two threads read without pause, as a pool's readers under load do:
    /// each gives its permit back and asks again at once. A semaphore lets
    /// the thread that gave take back first; these permits go to the taker
    /// of them all as soon as the reads under way end. Observed by each read
    /// as it begins: while a taker waits, no read begins, but for one per
    /// reader that took its permit in the instant before the taker began to
    /// wait (however long the taker's thread is held up before it asks).
    func testATakerOfAllIsNotStarvedByReadsThatKeepComing() {
        let permits = ReadPermits(count: 2)
        let stop = Atomic(false)
        let events = Mutex<[String]>([])
        let done = DispatchGroup()
        for _ in 0..<2 {
            DispatchQueue.global().async(group: done) {
                while !stop.load(ordering: .relaxed) {
                    permits.take()
                    let takerWaits = permits.waiting.takersOfAll > 0
                    events.withLock { $0.append(takerWaits ? "read while a taker waits" : "read") }
                    pause(0.01)   // the read's own work
                    permits.give()
                }
            }
        }
        var failed = 0
        var readsWhileAsking: [Int] = []
        for _ in 0..<30 {
            events.withLock { $0.append("asked") }
            if permits.takeAll(by: Date(timeIntervalSinceNow: 10)) {
                let order = events.withLock { log -> [String] in log.append("took"); return log }
                let asked = order.lastIndex(of: "asked")!
                readsWhileAsking.append(order[asked...].filter { $0 == "read while a taker waits" }.count)
                permits.giveAll()
            } else {
                failed += 1
            }
            // Reads run between two takers.
            assertEventually("no read ran after the taker gave the permits back") {
                events.withLock { $0.last == "read" }
            }
        }
        stop.store(true, ordering: .relaxed)
        done.wait()
        XCTAssertEqual(failed, 0, "reads that kept coming held the permits for 10 s")
        // A read that saw the taker waiting took its permit just before the
        // taker began to wait: one per reader at most. A semaphore let them go
        // on for as long as they kept coming (tens of reads a round).
        XCTAssertLessThanOrEqual(readsWhileAsking.max() ?? 0, 2, "reads began while a taker of all waited: \(readsWhileAsking)")
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
        assertEventually("the taker of all never waited") { permits.waiting.takersOfAll == 1 }
        let readDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            permits.take()
            events.withLock { $0.append("new read") }
            permits.give()
            readDone.signal()
        }
        assertEventually("the new read never waited") { permits.waiting.reads == 1 }
        XCTAssertEqual(events.withLock { $0 }, [], "a read began while a taker of all waited")
        permits.give()  // the read under way ends
        tookAll.wait()
        XCTAssertEqual(events.withLock { $0 }, ["took all"])
        XCTAssertEqual(permits.waiting.reads, 1, "the new read runs while the taker holds every permit")
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
