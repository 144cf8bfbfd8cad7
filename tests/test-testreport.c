/* test-testreport: failed test names and output tails for error lines. */
#include "autoconfig.h"
#include "testreport.h"

#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "tap.h"

static int found;

static const char *fails(const char *out)
{
	static struct buf b;
	buf_free(&b);
	memset(&b, 0, sizeof(b));
	found = testreport_failures(out, strlen(out), &b);
	return b.data ? b.data : "";
}

static const char *tail(const char *out, int lines)
{
	static struct buf b;
	buf_free(&b);
	memset(&b, 0, sizeof(b));
	testreport_tail(out, strlen(out), lines, &b);
	return b.data ? b.data : "";
}

int main(void)
{
	struct buf big = { 0 };
	int i;

	/* python unittest, 3.11+ and older. */
	is_str(fails("..F.E\n"
		     "======================================================================\n"
		     "FAIL: test_add (test_calc.CalcTest.test_add)\n"
		     "----------------------------------------------------------------------\n"
		     "Traceback (most recent call last):\n"
		     "AssertionError: 3 != 4\n"
		     "======================================================================\n"
		     "ERROR: test_div (test_calc.CalcTest)\n"
		     "FAILED (failures=1, errors=1)\n"),
	       "test_add (test_calc.CalcTest.test_add), test_div (test_calc.CalcTest)",
	       "python unittest FAIL and ERROR; its FAILED summary is not a name");
	is_int(found, 2, "two unittest failures counted");

	/* pytest. */
	is_str(fails("tests/test_x.py F.\n"
		     "=========================== short test summary info ============================\n"
		     "FAILED tests/test_x.py::test_one - assert 1 == 2\n"
		     "FAILED tests/test_x.py::TestK::test_two[param-1] - KeyError\n"
		     "ERROR tests/test_y.py - ModuleNotFoundError: No module named 'z'\n"
		     "========================= 2 failed, 1 error in 0.12s ==========================\n"),
	       "tests/test_x.py::test_one, tests/test_x.py::TestK::test_two[param-1], tests/test_y.py",
	       "pytest FAILED and ERROR summary lines");
	is_str(fails("\x1b[31mFAILED\x1b[0m tests/t.py::test_c - x\n"), "tests/t.py::test_c",
	       "colour codes do not hide a pytest failure");

	/* go test. */
	is_str(fails("=== RUN   TestA\n--- FAIL: TestA (0.00s)\n    --- FAIL: TestA/sub_case (0.00s)\n"
		     "--- PASS: TestB (0.00s)\nFAIL\nFAIL\texample.com/m\t0.003s\n"),
	       "TestA, TestA/sub_case", "go test failures and subtests; bare FAIL lines ignored");

	/* TAP. */
	is_str(fails("1..5\nok 1 - fine\nnot ok 2 - adds numbers\nnot ok 3\n"
		     "not ok 4 - later # TODO not written\nnot ok 5 - skipped thing # SKIP no net\n"
		     "    not ok 1 - nested case\n"),
	       "adds numbers, test 3, skipped thing, nested case",
	       "TAP: descriptions, numbers, TODO ignored, directive stripped, subtests");

	/* cargo. */
	is_str(fails("running 3 tests\ntest tests::ok_one ... ok\ntest tests::bad_one ... FAILED\n"
		     "test tests::bad_two ... FAILED\n\nfailures:\n    tests::bad_one\n"),
	       "tests::bad_one, tests::bad_two", "cargo test FAILED lines");

	/* jest. */
	is_str(fails(" FAIL  src/sum.test.js\n  \xe2\x97\x8f sum \xe2\x80\xba adds 1 + 2  \n\n"
		     "    expect(received).toBe(expected)\n  \xe2\x97\x8f Console\n"),
	       "sum \xe2\x80\xba adds 1 + 2", "jest bullet lines, not its Console block");

	/* Deduplication and nothing found. */
	is_str(fails("--- FAIL: TestA (0.00s)\n--- FAIL: TestA (0.01s)\nFAIL: test_a (m.C.test_a)\n"
		     "FAIL: test_a (m.C.test_a)\n"),
	       "TestA, test_a (m.C.test_a)", "a test reported twice is listed once");
	is_int(found, 2, "and counted once");
	is_str(fails("all good\nok 1\nRan 3 tests\nOK\n"), "", "passing output names nothing");
	is_int(found, 0, "and counts zero");
	is_str(fails("not ok 1 - \x1b]0;title\x07sneaky\x1b[2J name\n"), "sneaky name",
	       "names are sanitized");
	is_str(fails("--- FAIL: TestWin (0.00s)\r\nnot ok 2 - crlf\r\n"), "TestWin, crlf", "CRLF output");

	/* Many failures: listed up to 20, all counted. */
	for (i = 1; i <= 25; i++)
		buf_printf(&big, "--- FAIL: Test%02d (0.00s)\n", i);
	{
		const char *r = fails(big.data);
		is_int(found, 25, "25 distinct failures counted");
		ok(strstr(r, "Test20") && !strstr(r, "Test21") && strstr(r, " (5 more)"),
		   "first 20 listed, then (5 more): %s", r);
	}
	buf_free(&big);

	/* Tail. */
	is_str(tail("one\ntwo\nthree\nfour\n", 2), "three\nfour", "last two lines, one per line");
	is_str(tail("one\ntwo", 5), "one\ntwo", "fewer lines than asked, no final newline");
	is_str(tail("a\n\n   \nb  \n\n\n", 2), "a\nb", "blank lines skipped, trailing spaces trimmed");
	is_str(tail("x\n\x1b[31mred\x1b[0m \x1b]0;t\x07\n", 1), "red", "tail is sanitized");
	is_str(tail("x\ny\n", 0), "", "zero lines: nothing");
	is_str(tail("", 3), "", "empty output: nothing");
	for (i = 0; i < 100; i++)
		buf_printf(&big, "line %03d %s\n", i, "................................................................");
	{
		const char *r = tail(big.data, 100);
		ok(strlen(r) <= 2048, "tail is at most 2 KiB (%zu)", strlen(r));
		ok(strncmp(r, "...", 3) == 0 && strstr(r, "line 099") && !strstr(r, "line 000"),
		   "a long tail keeps the end and marks the cut");
	}
	buf_reset(&big);
	for (i = 0; i < 20000; i++)
		buf_adds(&big, "xxxxxxxx\n");
	buf_adds(&big, "the end\n");
	is_str(tail(big.data, 1), "the end", "large output: last line found");
	buf_free(&big);
	return tap_done();
}
