/* A program of the CUDA driver API alone, as one built with nvcc's static runtime is (the runtime inside it
 * opens libcuda.so.1 with dlopen): no libcudart is loaded, so a profiler finding libcupti has only the driver
 * to go by, whose file name (libcuda.so.1) says nothing of the CUDA version.
 * Prints the driver version it was given. */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	int (*init)(unsigned int), (*version)(int *);
	int v = 0;

	if (!h) {
		fprintf(stderr, "driver_api: %s\n", dlerror());
		return 1;
	}
	*(void **)&init = dlsym(h, "cuInit");
	*(void **)&version = dlsym(h, "cuDriverGetVersion");
	if (!init || !version || init(0) != 0 || version(&v) != 0)
		return 1;
	printf("driver %d\n", v);
	return 0;
}
