# ctest test Tests.ThreadedTestsCarryTheThreadsLabel (tests/CMakeLists.txt): the tests that start
# threads are selected by the label `threads` (what scripts/test.sh runs under ThreadSanitizer), and a
# test without threads is not. Run as: cmake -DBUILD_DIR=... -DCTEST=... -P threads_label_check.cmake
execute_process(COMMAND ${CTEST} --test-dir ${BUILD_DIR} -N -L "^threads$"
                OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ctest -N -L '^threads$' failed (${rc})")
endif()
# One of each kind: the naming rule (ThreadPool, Concurrent, Threads, ThreadCount), a suite a layer
# lists with THREADS, the C API's concurrent test.
foreach(t ThreadPool.ReusedForManyLoops CacheTest.ConcurrentPrefetchAndAcquireAgree
          AsyncCallThreads.OwnerAndCallRunAtTheSameTime Matmul.ThreadCountAndBatchIndependent
          NpuPath.StreamingThroughOneDomainIsBitIdenticalToo ApiC.ConcurrentDuplicatedContexts)
  string(FIND "${listed}" ": ${t}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${t} is not labelled threads")
  endif()
endforeach()
string(FIND "${listed}" ": Fp16.KnownValues\n" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "Fp16.KnownValues (no threads) is labelled threads")
endif()
string(REGEX MATCHALL "Test +#[0-9]+:" tests "${listed}")
list(LENGTH tests n)
message(STATUS "${n} tests labelled threads")
