// addon-host.c: a stand-in for Node that loads a guise.node built for
// another platform where no Node of it is at hand: under qemu-user for
// linux-arm64, under Wine for win32-x64 (bindings/node/check-foreign.sh):
//
//	addon-host ADDON URL
//
// On Linux it dlopens ADDON with RTLD_NOW, so every symbol the addon
// imports must resolve: libguise's through the addon's RUNPATH $ORIGIN,
// the N-API and libuv functions against the stubs this program is linked
// with (check-foreign.sh generates them from the addon's imports and
// exports them with -rdynamic). On Windows it is built as node.exe,
// exporting the stubs, as the addon imports them from node.exe, and loads
// ADDON as Node does (libuv's uv_dlopen): LoadLibraryExW with
// LOAD_WITH_ALTERED_SEARCH_PATH, so guise.dll must be found beside the
// addon. It then runs the addon's napi_register_module_v1 (the ABI check,
// then its properties, with the stubs below printing what it sets), and
// makes one request with the library's guise_fetch to URL, printing the
// status and the body's length.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guise.h"

#ifdef _WIN32
#include <windows.h>
#define EXPORT __declspec(dllexport)
#else
#include <dlfcn.h>
#define EXPORT
#endif

// The stubs of the N-API functions whose arguments are worth seeing; the
// rest, generated, return napi_ok (0) and write nothing.
EXPORT int napi_create_int32(void *env, int32_t v, void **result) {
	(void)env;
	(void)result;
	printf("addon: napi_create_int32 %d\n", v);
	return 0;
}

EXPORT int napi_create_string_utf8(void *env, const char *s, size_t n, void **result) {
	(void)env;
	(void)result;
	printf("addon: napi_create_string_utf8 \"%.*s\"\n", n == SIZE_MAX ? (int)strlen(s) : (int)n, s);
	return 0;
}

EXPORT int napi_define_properties(void *env, void *obj, size_t n, const void *props) {
	(void)env;
	(void)obj;
	(void)props;
	printf("addon: napi_define_properties %d\n", (int)n);
	return 0;
}

EXPORT int napi_throw_error(void *env, const char *code, const char *msg) {
	(void)env;
	printf("addon: napi_throw_error %s: %s\n", code ? code : "-", msg);
	exit(1);
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: addon-host ADDON URL\n");
		return 2;
	}
#ifdef _WIN32
	wchar_t path[32768];
	if (!MultiByteToWideChar(CP_UTF8, 0, argv[1], -1, path, 32768)) return 1;
	// ADDON_HOST_PLAIN=1: without the flag, the control that shows it is
	// what finds guise.dll (the load then fails with 126, module not found).
	const char *plain = getenv("ADDON_HOST_PLAIN");
	DWORD flags = plain != NULL && plain[0] == '1' ? 0 : LOAD_WITH_ALTERED_SEARCH_PATH;
	HMODULE h = LoadLibraryExW(path, NULL, flags);
	if (h == NULL) {
		fprintf(stderr, "addon-host: LoadLibraryExW %s: error %lu\n", argv[1], GetLastError());
		return 1;
	}
	HMODULE lib = GetModuleHandleA("guise.dll");
	if (lib == NULL) {
		fprintf(stderr, "addon-host: guise.dll is not loaded\n");
		return 1;
	}
	char where[MAX_PATH];
	GetModuleFileNameA(lib, where, sizeof where);
	printf("libguise: loaded from %s\n", where);
#define SYM(m, name) ((void *)GetProcAddress(m, name))
#else
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "addon-host: %s\n", dlerror());
		return 1;
	}
	void *lib = h; // dlsym looks in the addon's dependencies too
#define SYM(m, name) dlsym(m, name)
#endif
	void *(*reg)(void *, void *) = (void *(*)(void *, void *))SYM(h, "napi_register_module_v1");
	int32_t (*abi)(void) = (int32_t(*)(void))SYM(lib, "guise_abi_version");
	guise_handle (*fetch)(guise_handle, guise_request *, guise_head *, uint8_t *, size_t, guise_error *) =
		(guise_handle(*)(guise_handle, guise_request *, guise_head *, uint8_t *, size_t, guise_error *))SYM(lib, "guise_fetch");
	if (reg == NULL || abi == NULL || fetch == NULL) {
		fprintf(stderr, "addon-host: napi_register_module_v1, guise_abi_version or guise_fetch not found\n");
		return 1;
	}
	printf("libguise: guise_abi_version %d\n", (int)abi());
	void *exports = (void *)&argc; // any non-NULL value: the stubs do not look at it
	if (reg((void *)&argv, exports) != exports) {
		fprintf(stderr, "addon-host: napi_register_module_v1 did not return its exports\n");
		return 1;
	}
	printf("addon: napi_register_module_v1 returned its exports\n");

	guise_request req = {0};
	req.url = argv[2];
	req.url_len = strlen(argv[2]);
	guise_head head = {0};
	guise_error err = {0};
	static uint8_t buf[64 << 10];
	guise_handle call = fetch(0, &req, &head, buf, sizeof buf, &err);
	if (err.kind != 0) {
		fprintf(stderr, "addon-host: guise_fetch: kind %d: %s\n", (int)err.kind, err.message);
		return 1;
	}
	if (call != 0 || !(head.flags & GUISE_HEAD_COPIED)) {
		fprintf(stderr, "addon-host: the response did not come back whole in the buffer\n");
		return 1;
	}
	printf("libguise: guise_fetch %s: status %d, proto %d, %lld body bytes\n", argv[2], (int)head.status,
		(int)head.proto, (long long)head.prefetched);
	return 0;
}
