// The resilient watch moved to shared/k8s/watch.ts when product code (the dashboard) came to need
// it; the pump, the observer and their tests keep importing it from here.
export * from '../../shared/k8s/watch.ts';
